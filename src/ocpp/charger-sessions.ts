// What a charger transaction does to its session (issue 20 point 4): the rules, on top of
// store/ocpp.ts and store/sessions.ts, each message's effect committed as one durable
// SQLite transaction before the charger is answered.
// - The session row follows the transaction under its own id (charger-session-id.ts):
//   active at StartTransaction, completed at the stop.
// - Its readings are the register values, one per instant (register-readings.ts), less
//   values that break monotonicity against meterStart/meterStop (left out, reported).
// - A transaction the charger never stopped is closed by the gateway with its last register
//   value when the connector starts another one or is Available after a reboot, flagged.
// - A stopped transaction's session changes for late MeterValues (or the charger's own stop
//   after the gateway closed it) only until `lateValuesMs` after the stop was stored; later
//   values are kept as sent and reported, the cdr stays as it is.
import { durableTransaction, type Db } from '../store/db.js';
import { OcppStore, type SampledValueRow, type StartInput, type StopInput, type TransactionRecord } from '../store/ocpp.js';
import { SessionStore } from '../store/sessions.js';
import { SignedValueStore, type SignedValueRow } from '../store/signed-values.js';
import { chargerSessionId } from './charger-session-id.js';
import { ENERGY_REGISTER, edgeReadings, isEdge, registerAtInstant, registerBreak, roundKwh, type RegisterBreak } from './register-readings.js';

/** Why a register value did not change the session. */
export type RegisterDropReason = RegisterBreak | 'after-cut-off';

export interface RegisterDrop {
  readonly chargePointId: string;
  readonly transactionId: number;
  readonly sampledAtMs: number;
  readonly energyKwh: number;
  readonly reason: RegisterDropReason;
}

/** Why the gateway closed a transaction the charger did not stop. */
export type InferredStop = 'new-transaction' | 'reboot';

export interface ChargerSessionsOptions {
  /** Market whose prices price charger sessions. */
  readonly marketArea: string;
  /** The configured meter that measures a connector, whose stored readings then price its sessions (null: the charger's register). */
  readonly connectorMeter?: (chargePointId: string, connectorId: number) => string | null;
  /** How long after a stop late values still change the session (sessions.late_meter_values_s). */
  readonly lateValuesMs?: number;
  /** Each value left out (logged and counted by the caller). */
  readonly onDropped?: (drop: RegisterDrop) => void;
  /** Signed values that found no room (store/signed-values.ts MAX_SIGNED_PER_TRANSACTION), logged and counted by the caller. */
  readonly onSignedDropped?: (chargePointId: string, transactionId: number, count: number) => void;
  /** What else a stop records (the charger's or the gateway's), inside the stop's SQLite transaction. */
  readonly onStopped?: (tx: TransactionRecord, nowMs: number) => void;
}

export const DEFAULT_LATE_VALUES_S = 600;

export class ChargerSessions {
  readonly store: OcppStore;
  readonly sessions: SessionStore;
  readonly signed: SignedValueStore;
  private readonly marketArea: string;
  private readonly connectorMeter: (chargePointId: string, connectorId: number) => string | null;
  private readonly lateValuesMs: number;
  private readonly onDropped: (drop: RegisterDrop) => void;
  private readonly onStopped: (tx: TransactionRecord, nowMs: number) => void;
  private readonly onSignedDropped: (chargePointId: string, transactionId: number, count: number) => void;

  constructor(
    private readonly db: Db,
    options: ChargerSessionsOptions,
  ) {
    this.store = new OcppStore(db);
    this.sessions = new SessionStore(db);
    this.signed = new SignedValueStore(db);
    this.onSignedDropped = options.onSignedDropped ?? (() => undefined);
    this.marketArea = options.marketArea;
    this.connectorMeter = options.connectorMeter ?? (() => null);
    this.lateValuesMs = options.lateValuesMs ?? DEFAULT_LATE_VALUES_S * 1000;
    this.onDropped = options.onDropped ?? (() => undefined);
    this.onStopped = options.onStopped ?? (() => undefined);
  }

  /**
   * The transaction, created with its active session, or the one a repeat of the same
   * StartTransaction created before (`repeated`): a charger that lost our answer gets the
   * same transaction id again. Transactions still open on the connector that started
   * before it are closed (`closed`, flagged 'new-transaction'): one connector charges one
   * car at a time, so the charger lost their stop.
   */
  startTransaction(input: StartInput, nowMs: number): { transaction: TransactionRecord; repeated: boolean; closed: TransactionRecord[] } {
    return durableTransaction(this.db, () => {
      const { transaction, repeated } = this.store.insertTransaction(input, nowMs);
      if (repeated) return { transaction, repeated, closed: [] };
      const stale = this.store.openOnConnector(input.chargePointId, input.connectorId).filter((t) => t.transactionId !== transaction.transactionId && t.startedAtMs < transaction.startedAtMs);
      const closed = stale.map((t) => this.close(t, 'new-transaction', nowMs));
      this.syncSession(transaction, nowMs);
      return { transaction, repeated, closed };
    });
  }

  /**
   * Closes the connector's transactions still open that the gateway stored before
   * `storedBeforeMs` (the charger's reboot, when the connector is Available after it): each
   * ends at its last register value, flagged.
   */
  closeOpen(chargePointId: string, connectorId: number, storedBeforeMs: number, reason: InferredStop, nowMs: number): TransactionRecord[] {
    return durableTransaction(this.db, () =>
      this.store
        .openOnConnector(chargePointId, connectorId)
        .filter((t) => t.createdAtMs < storedBeforeMs)
        .map((t) => this.close(t, reason, nowMs)),
    );
  }

  /**
   * Stores sampled values by their own timestamps (a repeat adds nothing). With a
   * transaction of this charger, its session's readings follow. Returns whether the
   * transaction was known; values of an unknown transaction are kept without one.
   */
  addMeterValues(chargePointId: string, connectorId: number, transactionId: number | null, values: readonly SampledValueRow[], nowMs: number, signed: readonly SignedValueRow[] = []): boolean {
    const drops: RegisterDrop[] = [];
    const known = durableTransaction(this.db, () => {
      const tx = transactionId === null ? undefined : this.store.transaction(transactionId);
      const own = tx && tx.chargePointId === chargePointId ? tx : undefined;
      this.store.insertValues(chargePointId, connectorId, own ? own.transactionId : null, values, nowMs);
      this.storeSigned(chargePointId, connectorId, own ?? null, signed, nowMs);
      if (own) {
        if (this.pastCutOff(own, nowMs)) drops.push(...this.registerInstants(own, values).map((r) => ({ ...r, reason: 'after-cut-off' as const })));
        else drops.push(...this.appendRegister(own, values, nowMs));
      }
      return transactionId === null || own !== undefined;
    });
    for (const d of drops) this.onDropped(d);
    return known;
  }

  /**
   * Ends the transaction (with its transactionData values) and completes its session;
   * options.onStopped runs inside the same SQLite transaction (what else the stop records).
   * `unknown`: no such transaction of this charger, nothing stored. A repeated stop of an
   * ended transaction changes nothing, except that the charger's own stop replaces one the
   * gateway inferred, until the cut-off.
   */
  stopTransaction(input: StopInput, transactionData: readonly SampledValueRow[], nowMs: number, signed: readonly SignedValueRow[] = []): 'stopped' | 'repeated' | 'unknown' {
    const drops: RegisterDrop[] = [];
    const outcome = durableTransaction(this.db, () => {
      const row = this.store.transaction(input.transactionId);
      if (!row || row.chargePointId !== input.chargePointId) return 'unknown';
      if (row.stoppedAtMs !== null && (row.stopInferred === null || this.pastCutOff(row, nowMs))) return 'repeated';
      this.store.insertValues(input.chargePointId, row.connectorId, row.transactionId, transactionData, nowMs);
      this.store.recordStop({ ...input, inferred: null, receivedAtMs: nowMs });
      const stopped = this.store.transaction(input.transactionId)!;
      this.storeSigned(input.chargePointId, row.connectorId, stopped, signed, nowMs);
      drops.push(...this.appendRegister(stopped, transactionData, nowMs));
      drops.push(...this.dropBeyondEdges(stopped));
      this.syncSession(stopped, nowMs);
      this.onStopped(stopped, nowMs);
      return 'stopped';
    });
    for (const d of drops) this.onDropped(d);
    return outcome;
  }

  /**
   * An open transaction's register at its start, learnt after it started: an OCPP 2.0.1
   * station may start a transaction without the register in its Started event (v201/
   * transactions.ts), and its session must not start at a placeholder. The edge reading at
   * the start moves to the value; readings already kept below it go (none should be).
   */
  meterStartFound(transactionId: number, meterStartWh: number, nowMs: number): void {
    durableTransaction(this.db, () => {
      if (!this.store.setMeterStart(transactionId, meterStartWh)) return;
      const tx = this.store.transaction(transactionId)!;
      const session = chargerSessionId(tx.chargePointId, tx.transactionId);
      this.sessions.deleteReading(session, tx.startedAtMs);
      for (const r of this.sessions.get(session, true)?.readings ?? []) {
        if (r.energyKwh * 1000 < meterStartWh) this.sessions.deleteReading(session, r.timestampMs);
      }
      this.syncSession(tx, nowMs);
    });
  }

  /**
   * Keeps the signed values with the transaction (or with none). Values that arrive
   * before the cut-off change the cdr (its signed_data), so they move its last_updated.
   */
  private storeSigned(chargePointId: string, connectorId: number, tx: TransactionRecord | null, signed: readonly SignedValueRow[], nowMs: number): void {
    if (signed.length === 0) return;
    const late = tx !== null && this.pastCutOff(tx, nowMs);
    const { stored, dropped } = this.signed.insert(chargePointId, connectorId, tx?.transactionId ?? null, signed, nowMs, late);
    if (tx !== null && stored > 0 && !late) this.sessions.touch(chargerSessionId(tx.chargePointId, tx.transactionId), nowMs);
    if (tx !== null && dropped > 0) this.onSignedDropped(chargePointId, tx.transactionId, dropped);
  }

  /** The session's readings outside the transaction's edges go (and are counted) once meterStop is known. */
  private dropBeyondEdges(tx: TransactionRecord): RegisterDrop[] {
    if (this.connectorMeter(tx.chargePointId, tx.connectorId) !== null) return [];
    const session = chargerSessionId(tx.chargePointId, tx.transactionId);
    const readings = this.sessions.get(session, true)?.readings ?? [];
    const drops: RegisterDrop[] = [];
    for (const r of readings) {
      if (isEdge(tx, r.timestampMs)) continue;
      const reason = registerBreak(tx, r.energyKwh);
      if (reason === null) continue;
      this.sessions.deleteReading(session, r.timestampMs);
      drops.push({ chargePointId: tx.chargePointId, transactionId: tx.transactionId, sampledAtMs: r.timestampMs, energyKwh: r.energyKwh, reason });
    }
    this.store.addRegisterValuesDropped(tx.transactionId, drops.length);
    return drops;
  }

  /** The gateway's stop of a transaction the charger never stopped: at its last register value (or its start), flagged. */
  private close(tx: TransactionRecord, reason: InferredStop, nowMs: number): TransactionRecord {
    const metered = this.connectorMeter(tx.chargePointId, tx.connectorId) !== null;
    let meterStopWh = tx.meterStartWh;
    let stoppedAtMs = tx.startedAtMs;
    if (!metered) {
      const readings = this.sessions.get(chargerSessionId(tx.chargePointId, tx.transactionId), true)?.readings ?? [];
      const last = readings[readings.length - 1];
      if (last && last.timestampMs > tx.startedAtMs) {
        meterStopWh = Math.max(tx.meterStartWh, Math.round(last.energyKwh * 1000));
        stoppedAtMs = last.timestampMs;
      }
    } else {
      // A connector measured by a configured meter is billed from that meter up to the last sign of the charger.
      const at = this.store.lastInstant(tx.transactionId, null);
      if (at !== null && at > tx.startedAtMs) stoppedAtMs = at;
      const registerAt = this.store.lastInstant(tx.transactionId, ENERGY_REGISTER);
      const kwh = registerAt === null ? null : registerAtInstant(this.store.valuesAt(tx.transactionId, ENERGY_REGISTER, registerAt));
      if (kwh !== null && registerBreak(tx, kwh) === null) meterStopWh = Math.round(kwh * 1000);
    }
    this.store.recordStop({ transactionId: tx.transactionId, meterStopWh, stoppedAtMs, reason: null, idTag: null, inferred: reason, receivedAtMs: nowMs });
    const closed = this.store.transaction(tx.transactionId)!;
    this.syncSession(closed, nowMs);
    this.onStopped(closed, nowMs);
    return closed;
  }

  /** A stopped transaction whose stop was stored longer ago than the cut-off. */
  private pastCutOff(tx: TransactionRecord, nowMs: number): boolean {
    return tx.stoppedAtMs !== null && (tx.stopReceivedAtMs === null || nowMs - tx.stopReceivedAtMs > this.lateValuesMs);
  }

  /**
   * The session row follows the transaction: active, completed at the stop. Its readings
   * are kept in session_readings, one row per instant (appendRegister), or, for a connector
   * measured by a configured meter, are that meter's stored readings.
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

  /** The register reading at each instant the message sent register values for (registerAtInstant over all values stored then). */
  private registerInstants(tx: TransactionRecord, values: readonly SampledValueRow[]): Array<Omit<RegisterDrop, 'reason'>> {
    const instants = new Set(values.filter((v) => v.measurand === ENERGY_REGISTER).map((v) => v.sampledAtMs));
    const out: Array<Omit<RegisterDrop, 'reason'>> = [];
    for (const atMs of instants) {
      if (isEdge(tx, atMs)) continue;
      const energyKwh = registerAtInstant(this.store.valuesAt(tx.transactionId, ENERGY_REGISTER, atMs));
      if (energyKwh !== null) out.push({ chargePointId: tx.chargePointId, transactionId: tx.transactionId, sampledAtMs: atMs, energyKwh: roundKwh(energyKwh) });
    }
    return out;
  }

  /**
   * Sets the session's reading at each instant the message sent register values for, from
   * all values stored at that instant (so a late or repeated message lands or changes
   * nothing): the work is per message, not per session length. Values that break
   * monotonicity against the edges are left out and returned.
   */
  private appendRegister(tx: TransactionRecord, values: readonly SampledValueRow[], nowMs: number): RegisterDrop[] {
    if (this.connectorMeter(tx.chargePointId, tx.connectorId) !== null) return [];
    const session = chargerSessionId(tx.chargePointId, tx.transactionId);
    const drops: RegisterDrop[] = [];
    let changed = false;
    for (const r of this.registerInstants(tx, values)) {
      const reason = registerBreak(tx, r.energyKwh);
      if (reason !== null) {
        drops.push({ ...r, reason });
        changed = this.sessions.deleteReading(session, r.sampledAtMs) || changed;
        continue;
      }
      changed = this.sessions.appendReading(session, { timestampMs: r.sampledAtMs, energyKwh: r.energyKwh }) || changed;
    }
    this.store.addRegisterValuesDropped(tx.transactionId, drops.length);
    if (changed) this.sessions.touch(session, nowMs);
    return drops;
  }
}
