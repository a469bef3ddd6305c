// What the OCPP central system commits before it answers a charger (migrations 090, 151):
// boots, heartbeats, connector status, transactions, sampled meter values. Persistence
// only: what a transaction does to its session (its id, the register rule, closing a
// transaction the charger never stopped, the late-value cut-off) is ocpp/charger-sessions.ts,
// what the status page shows of a charger (its sessions' ids, their energy so far) ocpp/charge-point-view.ts,
// which runs these statements inside one durable SQLite transaction (`durable`).
// Transaction messages commit durably (synchronous=FULL, as readings do): the charger
// forgets what we answered, and a transaction id lost to a power cut could be handed out
// again by AUTOINCREMENT.
import { durableTransaction, type Db } from './db.js';

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
  /** Set when the gateway closed it ('new-transaction', 'reboot'): the charger never stopped it. */
  readonly stopInferred: string | null;
  readonly stopReceivedAtMs: number | null;
  /** Why the charger's timestamps cannot be trusted for it (its cdr answers 422), or null. */
  readonly clockProblem: string | null;
  readonly registerValuesDropped: number;
  /** When the gateway stored its StartTransaction (gateway time). */
  readonly createdAtMs: number;
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
  stop_inferred: string | null;
  stop_received_at_ms: number | null;
  clock_problem: string | null;
  register_values_dropped: number;
  created_at_ms: number;
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
  stopInferred: r.stop_inferred,
  stopReceivedAtMs: r.stop_received_at_ms,
  clockProblem: r.clock_problem,
  registerValuesDropped: r.register_values_dropped,
  createdAtMs: r.created_at_ms,
});

export interface StopRecord {
  readonly transactionId: number;
  readonly meterStopWh: number;
  readonly stoppedAtMs: number;
  readonly reason: string | null;
  readonly idTag: string | null;
  /** null: the charger's own StopTransaction. */
  readonly inferred: string | null;
  readonly receivedAtMs: number;
}

/** An open transaction with the newest stored value of one measurand (OcppStore.openWithNewestValue). */
export interface OpenWithNewestValue {
  readonly transactionId: number;
  readonly connectorId: number;
  readonly startedAtMs: number;
  readonly meterStartWh: number;
  readonly newest: { readonly value: number; readonly unit: string } | null;
}

export class OcppStore {
  private readonly stmts;

  constructor(private readonly db: Db) {
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
      bootedAt: db.prepare<[string], { booted_at_ms: number | null }>('SELECT booted_at_ms FROM ocpp_charge_points WHERE charge_point_id = ?'),
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
      openOnConnector: db.prepare<[string, number], TxRow>('SELECT * FROM ocpp_transactions WHERE charge_point_id = ? AND connector_id = ? AND stopped_at_ms IS NULL ORDER BY transaction_id'),
      stopTx: db.prepare(
        `UPDATE ocpp_transactions SET meter_stop_wh = @meterStopWh, stopped_at_ms = @stoppedAtMs, stop_reason = @reason, stop_id_tag = @idTag,
           stop_inferred = @inferred, stop_received_at_ms = @receivedAtMs WHERE transaction_id = @transactionId`,
      ),
      meterStart: db.prepare('UPDATE ocpp_transactions SET meter_start_wh = ? WHERE transaction_id = ? AND stopped_at_ms IS NULL'),
      addDropped: db.prepare('UPDATE ocpp_transactions SET register_values_dropped = register_values_dropped + ? WHERE transaction_id = ?'),
      clockProblem: db.prepare('UPDATE ocpp_transactions SET clock_problem = ? WHERE transaction_id = ? AND clock_problem IS NULL'),
      insertValue: db.prepare(
        `INSERT OR IGNORE INTO ocpp_meter_values (charge_point_id, connector_id, transaction_id, sampled_at_ms, measurand, phase, location, context, value, unit, received_at_ms)
         VALUES (@chargePointId, @connectorId, @transactionId, @sampledAtMs, @measurand, @phase, @location, @context, @value, @unit, @now)`,
      ),
      // The register values of one instant (index ocpp_meter_values_tx): a message costs the same at any point of a session.
      registerAt: db.prepare<[number, string, number], { phase: string; location: string; value: number; unit: string }>(
        'SELECT phase, location, value, unit FROM ocpp_meter_values WHERE transaction_id = ? AND measurand = ? AND sampled_at_ms = ? ORDER BY rowid',
      ),
      lastInstant: db.prepare<[number, string], { at: number | null }>('SELECT max(sampled_at_ms) AS at FROM ocpp_meter_values WHERE transaction_id = ? AND measurand = ?'),
      lastAnyInstant: db.prepare<[number], { at: number | null }>('SELECT max(sampled_at_ms) AS at FROM ocpp_meter_values WHERE transaction_id = ?'),
      openOnCharger: db.prepare<[string], { transaction_id: number; connector_id: number; started_at_ms: number }>(
        'SELECT transaction_id, connector_id, started_at_ms FROM ocpp_transactions WHERE charge_point_id = ? AND stopped_at_ms IS NULL ORDER BY transaction_id',
      ),
      openCount: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM ocpp_transactions WHERE stopped_at_ms IS NULL'),
      chargePoint: db.prepare<[string], { vendor: string | null; model: string | null; firmware_version: string | null }>('SELECT vendor, model, firmware_version FROM ocpp_charge_points WHERE charge_point_id = ?'),
      connectorStatus: db.prepare<[string, number], { status: string; status_at_ms: number; received_at_ms: number }>('SELECT status, status_at_ms, received_at_ms FROM ocpp_connector_status WHERE charge_point_id = ? AND connector_id = ?'),
      connectors: db.prepare<[string], { connector_id: number; status: string; error_code: string; status_at_ms: number }>(
        'SELECT connector_id, status, error_code, status_at_ms FROM ocpp_connector_status WHERE charge_point_id = ? ORDER BY connector_id',
      ),
      // The open transactions, each with its newest value of one measurand and phase (index ocpp_meter_values_tx).
      open: db.prepare<{ chargePointId: string; measurand: string; phase: string }, { transaction_id: number; connector_id: number; started_at_ms: number; meter_start_wh: number; value: number | null; unit: string | null }>(
        `SELECT t.transaction_id, t.connector_id, t.started_at_ms, t.meter_start_wh, v.value, v.unit
         FROM ocpp_transactions t
         LEFT JOIN ocpp_meter_values v ON v.rowid = (SELECT n.rowid FROM ocpp_meter_values n
           WHERE n.transaction_id = t.transaction_id AND n.measurand = @measurand AND n.phase = @phase ORDER BY n.sampled_at_ms DESC LIMIT 1)
         WHERE t.charge_point_id = @chargePointId AND t.stopped_at_ms IS NULL ORDER BY t.transaction_id`,
      ),
    };
  }

  /** Runs `work` as one SQLite transaction (synchronous=NORMAL). */
  atomically<T>(work: () => T): T {
    return this.db.transaction(work)();
  }

  /** Runs `work` as one durable SQLite transaction (db.ts durableTransaction). */
  durable<T>(work: () => T): T {
    return durableTransaction(this.db, work);
  }

  recordBoot(chargePointId: string, info: { vendor: string; model: string; serialNumber: string | null; firmwareVersion: string | null }, nowMs: number): void {
    this.stmts.boot.run({ id: chargePointId, vendor: info.vendor, model: info.model, serial: info.serialNumber, firmware: info.firmwareVersion, now: nowMs });
  }

  recordHeartbeat(chargePointId: string, nowMs: number): void {
    this.stmts.heartbeat.run(chargePointId, nowMs);
  }

  /** When the charger last sent BootNotification (gateway time), or null. */
  bootedAtMs(chargePointId: string): number | null {
    return this.stmts.bootedAt.get(chargePointId)?.booted_at_ms ?? null;
  }

  /** The connector's stored status (the newest by the charger's time), kept across restarts. */
  connectorStatus(chargePointId: string, connectorId: number): { status: string; atMs: number; receivedAtMs: number } | null {
    const r = this.stmts.connectorStatus.get(chargePointId, connectorId);
    return r ? { status: r.status, atMs: r.status_at_ms, receivedAtMs: r.received_at_ms } : null;
  }

  /** The charger's connectors whose stored status is `status`. */
  connectorsIn(chargePointId: string, status: string): number[] {
    return this.stmts.connectors.all(chargePointId).filter((r) => r.status === status).map((r) => r.connector_id);
  }

  /** A status older than the stored one (a late message) does not replace it. */
  recordStatus(chargePointId: string, s: { connectorId: number; status: string; errorCode: string; info: string | null; atMs: number }, nowMs: number): void {
    this.stmts.status.run({ id: chargePointId, connector: s.connectorId, status: s.status, errorCode: s.errorCode, info: s.info, at: s.atMs, now: nowMs });
  }

  /** The new transaction, or the one the same StartTransaction created before (`repeated`). */
  insertTransaction(input: StartInput, nowMs: number): { transaction: TransactionRecord; repeated: boolean } {
    const key = [input.chargePointId, input.connectorId, input.idTag, input.meterStartWh, input.startedAtMs] as const;
    const existing = this.stmts.txByKey.get(...key);
    if (existing) return { transaction: toTx(existing), repeated: true };
    this.stmts.insertTx.run({ ...input, now: nowMs });
    return { transaction: toTx(this.stmts.txByKey.get(...key)!), repeated: false };
  }

  transaction(transactionId: number): TransactionRecord | undefined {
    const row = this.stmts.txById.get(transactionId);
    return row ? toTx(row) : undefined;
  }

  /** The connector's transactions not stopped yet, oldest first. */
  openOnConnector(chargePointId: string, connectorId: number): TransactionRecord[] {
    return this.stmts.openOnConnector.all(chargePointId, connectorId).map(toTx);
  }

  /** Stores sampled values by their own timestamps (a repeat adds nothing). */
  insertValues(chargePointId: string, connectorId: number, transactionId: number | null, values: readonly SampledValueRow[], nowMs: number): void {
    for (const v of values) this.stmts.insertValue.run({ chargePointId, connectorId, transactionId, ...v, now: nowMs });
  }

  /** The values of `measurand` the transaction has at one instant. */
  valuesAt(transactionId: number, measurand: string, atMs: number): Array<{ phase: string; location: string; value: number; unit: string }> {
    return this.stmts.registerAt.all(transactionId, measurand, atMs);
  }

  /** The newest instant with a value of `measurand` (any measurand when null), or null. */
  lastInstant(transactionId: number, measurand: string | null): number | null {
    return (measurand === null ? this.stmts.lastAnyInstant.get(transactionId) : this.stmts.lastInstant.get(transactionId, measurand))?.at ?? null;
  }

  recordStop(stop: StopRecord): void {
    this.stmts.stopTx.run(stop);
  }

  /** An open transaction's register at its start, learnt after the start (an OCPP 2.0.1 Started event without it). */
  setMeterStart(transactionId: number, meterStartWh: number): boolean {
    return this.stmts.meterStart.run(meterStartWh, transactionId).changes > 0;
  }

  addRegisterValuesDropped(transactionId: number, count: number): void {
    if (count > 0) this.stmts.addDropped.run(count, transactionId);
  }

  /** Keeps the first reason given. */
  flagClock(transactionId: number, problem: string): boolean {
    return this.stmts.clockProblem.run(problem, transactionId).changes > 0;
  }

  /** What the store holds of a charge point: its boot info, connector states and open transactions (ids, start). */
  chargePointView(chargePointId: string): {
    vendor: string | null;
    model: string | null;
    firmwareVersion: string | null;
    connectors: Array<{ connectorId: number; status: string; errorCode: string; statusAtMs: number }>;
    openTransactions: Array<{ transactionId: number; connectorId: number; startedAtMs: number }>;
  } {
    const cp = this.stmts.chargePoint.get(chargePointId);
    return {
      vendor: cp?.vendor ?? null,
      model: cp?.model ?? null,
      firmwareVersion: cp?.firmware_version ?? null,
      connectors: this.stmts.connectors.all(chargePointId).map((r) => ({ connectorId: r.connector_id, status: r.status, errorCode: r.error_code, statusAtMs: r.status_at_ms })),
      openTransactions: this.stmts.openOnCharger.all(chargePointId).map((r) => ({ transactionId: r.transaction_id, connectorId: r.connector_id, startedAtMs: r.started_at_ms })),
    };
  }

  /** The charger's open transactions, oldest first, each with its newest value of `measurand` at `phase` ('' for none), null without one. */
  openWithNewestValue(chargePointId: string, measurand: string, phase: string): OpenWithNewestValue[] {
    return this.stmts.open.all({ chargePointId, measurand, phase }).map((r) => ({
      transactionId: r.transaction_id,
      connectorId: r.connector_id,
      startedAtMs: r.started_at_ms,
      meterStartWh: r.meter_start_wh,
      newest: r.value === null || r.unit === null ? null : { value: r.value, unit: r.unit },
    }));
  }

  /** Transactions not stopped yet, on every charger. */
  openTransactions(): number {
    return this.stmts.openCount.get()!.n;
  }
}
