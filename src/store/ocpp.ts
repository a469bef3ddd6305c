// What the OCPP central system commits before it answers a charger (migration 090): boots,
// heartbeats, connector status, transactions, sampled meter values. A transaction is kept
// in step with its session row (store/sessions.ts, cpo_transaction_id
// `<chargePointId>-<transactionId>`) in the same SQLite transaction, so nothing is ever
// half-stored and the session is priced like any other. Transaction messages commit
// durably (synchronous=FULL, as readings do): the charger forgets what we answered, and a
// transaction id lost to a power cut could be handed out again by AUTOINCREMENT.
import { ENERGY_REGISTER, edgeReadings, isEdge, registerAtInstant } from '../ocpp/register-readings.js';
import { durableTransaction, type Db } from './db.js';
import { SessionStore } from './sessions.js';

export interface SampledValueRow {
  readonly sampledAtMs: number;
  readonly measurand: string;
  readonly phase: string;
  readonly location: string;
  readonly context: string;
  readonly value: number;
  readonly unit: string;
}

export interface StartInput {
  readonly chargePointId: string;
  readonly connectorId: number;
  readonly idTag: string;
  readonly meterStartWh: number;
  readonly startedAtMs: number;
  readonly reservationId: number | null;
  readonly idTagStatus: string;
}

export interface StopInput {
  readonly chargePointId: string;
  readonly transactionId: number;
  readonly meterStopWh: number;
  readonly stoppedAtMs: number;
  readonly reason: string | null;
  readonly idTag: string | null;
}

export interface TransactionRecord {
  readonly transactionId: number;
  readonly chargePointId: string;
  readonly connectorId: number;
  readonly idTag: string;
  readonly idTagStatus: string;
  readonly meterStartWh: number;
  readonly startedAtMs: number;
  readonly meterStopWh: number | null;
  readonly stoppedAtMs: number | null;
}

interface TxRow {
  transaction_id: number;
  charge_point_id: string;
  connector_id: number;
  id_tag: string;
  id_tag_status: string;
  meter_start_wh: number;
  started_at_ms: number;
  meter_stop_wh: number | null;
  stopped_at_ms: number | null;
}

const toTx = (r: TxRow): TransactionRecord => ({
  transactionId: r.transaction_id,
  chargePointId: r.charge_point_id,
  connectorId: r.connector_id,
  idTag: r.id_tag,
  idTagStatus: r.id_tag_status,
  meterStartWh: r.meter_start_wh,
  startedAtMs: r.started_at_ms,
  meterStopWh: r.meter_stop_wh,
  stoppedAtMs: r.stopped_at_ms,
});

/** The session id a charger transaction is priced under (GET /api/v1/cdrs/:id). */
export const chargerSessionId = (chargePointId: string, transactionId: number): string => `${chargePointId}-${transactionId}`;

/**
 * Whether a session id is a charger transaction's (`<chargePointId>-<transactionId>` of a
 * stored transaction): such a session is the central system's to write, not a PUT's.
 */
export function isChargerSession(db: Db, cpoTransactionId: string): boolean {
  const m = /^(.+)-(\d{1,15})$/.exec(cpoTransactionId);
  if (!m) return false;
  const hasTable = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'ocpp_transactions'").get() !== undefined;
  return hasTable && db.prepare('SELECT 1 FROM ocpp_transactions WHERE transaction_id = ? AND charge_point_id = ?').get(Number(m[2]), m[1]) !== undefined;
}

export class OcppStore {
  private readonly stmts;
  private readonly sessions: SessionStore;

  constructor(
    private readonly db: Db,
    /** Market whose prices price charger sessions. */
    private readonly marketArea: string,
    /** The configured meter that measures a connector, whose stored readings then price its sessions (null: the charger's register). */
    private readonly connectorMeter: (chargePointId: string, connectorId: number) => string | null = () => null,
  ) {
    this.sessions = new SessionStore(db);
    this.stmts = {
      boot: db.prepare(
        `INSERT INTO ocpp_charge_points (charge_point_id, vendor, model, serial_number, firmware_version, booted_at_ms, last_heartbeat_ms)
         VALUES (@id, @vendor, @model, @serial, @firmware, @now, @now)
         ON CONFLICT (charge_point_id) DO UPDATE SET vendor = @vendor, model = @model, serial_number = @serial, firmware_version = @firmware, booted_at_ms = @now, last_heartbeat_ms = @now`,
      ),
      heartbeat: db.prepare(
        `INSERT INTO ocpp_charge_points (charge_point_id, last_heartbeat_ms) VALUES (?, ?)
         ON CONFLICT (charge_point_id) DO UPDATE SET last_heartbeat_ms = excluded.last_heartbeat_ms`,
      ),
      status: db.prepare(
        `INSERT INTO ocpp_connector_status (charge_point_id, connector_id, status, error_code, info, status_at_ms, received_at_ms)
         VALUES (@id, @connector, @status, @errorCode, @info, @at, @now)
         ON CONFLICT (charge_point_id, connector_id) DO UPDATE SET status = @status, error_code = @errorCode, info = @info, status_at_ms = @at, received_at_ms = @now
         WHERE excluded.status_at_ms >= ocpp_connector_status.status_at_ms`,
      ),
      insertTx: db.prepare(
        `INSERT INTO ocpp_transactions (charge_point_id, connector_id, id_tag, meter_start_wh, started_at_ms, reservation_id, id_tag_status, created_at_ms)
         VALUES (@chargePointId, @connectorId, @idTag, @meterStartWh, @startedAtMs, @reservationId, @idTagStatus, @now)
         ON CONFLICT DO NOTHING`,
      ),
      txByKey: db.prepare<[string, number, string, number, number], TxRow>(
        'SELECT * FROM ocpp_transactions WHERE charge_point_id = ? AND connector_id = ? AND id_tag = ? AND meter_start_wh = ? AND started_at_ms = ?',
      ),
      txById: db.prepare<[number], TxRow>('SELECT * FROM ocpp_transactions WHERE transaction_id = ?'),
      stopTx: db.prepare(
        'UPDATE ocpp_transactions SET meter_stop_wh = @meterStopWh, stopped_at_ms = @stoppedAtMs, stop_reason = @reason, stop_id_tag = @idTag WHERE transaction_id = @transactionId',
      ),
      insertValue: db.prepare(
        `INSERT OR IGNORE INTO ocpp_meter_values (charge_point_id, connector_id, transaction_id, sampled_at_ms, measurand, phase, location, context, value, unit, received_at_ms)
         VALUES (@chargePointId, @connectorId, @transactionId, @sampledAtMs, @measurand, @phase, @location, @context, @value, @unit, @now)`,
      ),
      // The register values of one instant (index ocpp_meter_values_tx): a message costs the same at any point of a session.
      registerAt: db.prepare<[number, string, number], { phase: string; location: string; value: number; unit: string }>(
        'SELECT phase, location, value, unit FROM ocpp_meter_values WHERE transaction_id = ? AND measurand = ? AND sampled_at_ms = ? ORDER BY rowid',
      ),
      openCount: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM ocpp_transactions WHERE stopped_at_ms IS NULL'),
      chargePoint: db.prepare<[string], { vendor: string | null; model: string | null }>('SELECT vendor, model FROM ocpp_charge_points WHERE charge_point_id = ?'),
      connectorStatus: db.prepare<[string, number], { status: string; status_at_ms: number }>('SELECT status, status_at_ms FROM ocpp_connector_status WHERE charge_point_id = ? AND connector_id = ?'),
      connectors: db.prepare<[string], { connector_id: number; status: string; error_code: string; status_at_ms: number }>(
        'SELECT connector_id, status, error_code, status_at_ms FROM ocpp_connector_status WHERE charge_point_id = ? ORDER BY connector_id',
      ),
      // The energy so far: the newest connector-total register value (or meterStart) less meterStart.
      open: db.prepare<[string, string], { transaction_id: number; connector_id: number; started_at_ms: number; energy_wh: number }>(
        `SELECT t.transaction_id, t.connector_id, t.started_at_ms,
           coalesce((SELECT CASE v.unit WHEN 'kWh' THEN v.value * 1000 ELSE v.value END FROM ocpp_meter_values v
                     WHERE v.transaction_id = t.transaction_id AND v.measurand = ? AND v.phase = '' ORDER BY v.sampled_at_ms DESC LIMIT 1), t.meter_start_wh) - t.meter_start_wh AS energy_wh
         FROM ocpp_transactions t WHERE t.charge_point_id = ? AND t.stopped_at_ms IS NULL ORDER BY t.transaction_id`,
      ),
    };
  }

  recordBoot(chargePointId: string, info: { vendor: string; model: string; serialNumber: string | null; firmwareVersion: string | null }, nowMs: number): void {
    this.stmts.boot.run({ id: chargePointId, vendor: info.vendor, model: info.model, serial: info.serialNumber, firmware: info.firmwareVersion, now: nowMs });
  }

  recordHeartbeat(chargePointId: string, nowMs: number): void {
    this.stmts.heartbeat.run(chargePointId, nowMs);
  }

  /** The connector's stored status (the newest by the charger's time), kept across restarts. */
  connectorStatus(chargePointId: string, connectorId: number): { status: string; atMs: number } | null {
    const r = this.stmts.connectorStatus.get(chargePointId, connectorId);
    return r ? { status: r.status, atMs: r.status_at_ms } : null;
  }

  /** A status older than the stored one (a late message) does not replace it. */
  recordStatus(chargePointId: string, s: { connectorId: number; status: string; errorCode: string; info: string | null; atMs: number }, nowMs: number): void {
    this.stmts.status.run({ id: chargePointId, connector: s.connectorId, status: s.status, errorCode: s.errorCode, info: s.info, at: s.atMs, now: nowMs });
  }

  /**
   * The transaction, created with its active session, or the one a repeat of the same
   * StartTransaction created before (`repeated`): a charger that lost our answer gets the
   * same transaction id again.
   */
  startTransaction(input: StartInput, nowMs: number): { transaction: TransactionRecord; repeated: boolean } {
    return durableTransaction(this.db, () => {
      const key = [input.chargePointId, input.connectorId, input.idTag, input.meterStartWh, input.startedAtMs] as const;
      const existing = this.stmts.txByKey.get(...key);
      if (existing) return { transaction: toTx(existing), repeated: true };
      this.stmts.insertTx.run({ ...input, now: nowMs });
      const tx = toTx(this.stmts.txByKey.get(...key)!);
      this.syncSession(tx, nowMs);
      return { transaction: tx, repeated: false };
    });
  }

  transaction(transactionId: number): TransactionRecord | undefined {
    const row = this.stmts.txById.get(transactionId);
    return row ? toTx(row) : undefined;
  }

  /**
   * Stores sampled values by their own timestamps (a repeat adds nothing). With a
   * transaction of this charger, its session's readings follow. Returns whether the
   * transaction was known; values of an unknown transaction are kept without one.
   */
  addMeterValues(chargePointId: string, connectorId: number, transactionId: number | null, values: readonly SampledValueRow[], nowMs: number): boolean {
    return durableTransaction(this.db, () => {
      const tx = transactionId === null ? undefined : this.stmts.txById.get(transactionId);
      const own = tx && tx.charge_point_id === chargePointId ? toTx(tx) : undefined;
      for (const v of values) this.stmts.insertValue.run({ chargePointId, connectorId, transactionId: own ? own.transactionId : null, ...v, now: nowMs });
      if (own) this.appendRegister(own, values, nowMs);
      return transactionId === null || own !== undefined;
    });
  }

  /**
   * Ends the transaction (with its transactionData values) and completes its session;
   * `onStopped` runs inside the same SQLite transaction (what else the stop records).
   * `unknown`: no such transaction of this charger, nothing stored. A repeated stop of an
   * ended transaction changes nothing.
   */
  stopTransaction(input: StopInput, transactionData: readonly SampledValueRow[], nowMs: number, onStopped?: (tx: TransactionRecord) => void): 'stopped' | 'repeated' | 'unknown' {
    return durableTransaction(this.db, () => {
      const row = this.stmts.txById.get(input.transactionId);
      if (!row || row.charge_point_id !== input.chargePointId) return 'unknown';
      if (row.stopped_at_ms !== null) return 'repeated';
      for (const v of transactionData) {
        this.stmts.insertValue.run({ chargePointId: input.chargePointId, connectorId: row.connector_id, transactionId: row.transaction_id, ...v, now: nowMs });
      }
      this.stmts.stopTx.run(input);
      const stopped = toTx(this.stmts.txById.get(input.transactionId)!);
      this.appendRegister(stopped, transactionData, nowMs);
      this.syncSession(stopped, nowMs);
      onStopped?.(stopped);
      return 'stopped';
    });
  }

  /** What the status page shows of a charge point: its boot info, connector states and open transactions. */
  chargePointView(chargePointId: string): {
    vendor: string | null;
    model: string | null;
    connectors: Array<{ connectorId: number; status: string; errorCode: string; statusAtMs: number }>;
    openTransactions: Array<{ transactionId: number; connectorId: number; session: string; startedAtMs: number; energyWh: number }>;
  } {
    const cp = this.stmts.chargePoint.get(chargePointId);
    return {
      vendor: cp?.vendor ?? null,
      model: cp?.model ?? null,
      connectors: this.stmts.connectors.all(chargePointId).map((r) => ({ connectorId: r.connector_id, status: r.status, errorCode: r.error_code, statusAtMs: r.status_at_ms })),
      openTransactions: this.stmts.open.all(ENERGY_REGISTER, chargePointId).map((r) => ({
        transactionId: r.transaction_id,
        connectorId: r.connector_id,
        session: chargerSessionId(chargePointId, r.transaction_id),
        startedAtMs: r.started_at_ms,
        energyWh: r.energy_wh,
      })),
    };
  }

  /** Transactions not stopped yet, on every charger. */
  openTransactions(): number {
    return this.stmts.openCount.get()!.n;
  }

  /**
   * The session row follows the transaction: active, completed at StopTransaction. Its
   * readings are kept in session_readings, one row per instant (appendRegister), or, for a
   * connector measured by a configured meter, are that meter's stored readings.
   */
  private syncSession(tx: TransactionRecord, nowMs: number): void {
    const meter = this.connectorMeter(tx.chargePointId, tx.connectorId);
    const session = chargerSessionId(tx.chargePointId, tx.transactionId);
    const stopped = tx.stoppedAtMs !== null;
    const { outcome } = this.sessions.upsert(
      { cpoTransactionId: session, marketArea: this.marketArea, status: stopped ? 'completed' : 'active', startMs: tx.startedAtMs, endMs: tx.stoppedAtMs, resourceId: meter, readings: null },
      nowMs,
    );
    if (meter !== null) return;
    // meterStart and meterStop are the register at the edges, whatever values were sampled there.
    let changed = false;
    for (const edge of edgeReadings(tx)) changed = this.sessions.appendReading(session, edge) || changed;
    if (changed && outcome === 'unchanged') this.sessions.touch(session, nowMs);
  }

  /**
   * The session's reading at each instant the message sent register values for, from all
   * values stored at that instant (so a late or repeated message lands or changes nothing):
   * the work is per message, not per session length.
   */
  private appendRegister(tx: TransactionRecord, values: readonly SampledValueRow[], nowMs: number): void {
    if (this.connectorMeter(tx.chargePointId, tx.connectorId) !== null) return;
    const session = chargerSessionId(tx.chargePointId, tx.transactionId);
    const instants = new Set(values.filter((v) => v.measurand === ENERGY_REGISTER).map((v) => v.sampledAtMs));
    let changed = false;
    for (const atMs of instants) {
      if (isEdge(tx, atMs)) continue;
      const energyKwh = registerAtInstant(this.stmts.registerAt.all(tx.transactionId, ENERGY_REGISTER, atMs));
      if (energyKwh !== null) changed = this.sessions.appendReading(session, { timestampMs: atMs, energyKwh }) || changed;
    }
    if (changed) this.sessions.touch(session, nowMs);
  }
}
