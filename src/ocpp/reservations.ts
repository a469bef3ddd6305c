// Reservations (OCPP 1.6 section 5.13 ReserveNow, 5.3 CancelReservation; docs/chargers.md
// "Reservations"): the central system allocates the reservationId, sends ReserveNow through
// the operator call path (charger-operations.ts) and keeps the reservation
// (store/ocpp-reservations.ts) until it ends the way the charger ends it:
//   - a transaction started with its reservationId (or by its idTag on its connector, any
//     connector for connector 0, from a charger that left the id out) ends it: 'transaction';
//   - its connector (connector 0: the charger) turning Faulted or Unavailable ends it, and
//     so does Reserved -> Available (the charger ended it on its own), for a reservation
//     requested before that Reserved was received (a newer one may cross the Available);
//     a connector-0 reservation, shown as Reserved on real connectors only, by the
//     Reserved -> Available of the last real connector that showed it;
//   - CancelReservation answered Accepted (or Rejected: the charger holds no such one).
//     It may be sent for any reservation not ended by its transaction or a cancel: one the
//     gateway ended on its own view (released, swept, refused on an invalid answer) may still
//     be held by the charger; its Accepted makes it 'cancelled', a Rejected keeps the end;
//   - its expiryDate passing ends it ('expired', swept every EXPIRY_SWEEP_MS and before reads).
// A ReserveNow the charger refuses (Faulted, Occupied, Rejected, Unavailable, a CallError)
// ends at once ('refused'); one that was never sent, 'not-sent'; one without an answer
// (timeout, connection lost mid-call) stays open: the charger may hold it.
//
// A reservation holds a connector for a car that is not there yet: the planner has nothing
// to plan for it (a plan starts with the transaction, or with a target an operator sets).
//
// Error policy: reserve() and cancel() never throw for the charger's part: the outcome is
// returned as charger-operations.ts gives it. Writes go through the store write queue;
// transactionStarted()/connectorStatus() run inside the charger handler's own unit.
import type { Logger } from '../log.js';
import type { ReservationRecord, ReservationStore } from '../store/ocpp-reservations.js';
import type { StoreWriteQueue } from '../store/write-queue.js';
import type { ChargerOperationsPort, OperationOutcome } from './charger-operations.js';

export const EXPIRY_SWEEP_MS = 30_000;

export interface ReservationRequest {
  readonly connectorId: number;
  readonly idTag: string;
  readonly parentIdTag: string | null;
  readonly expiryAtMs: number;
  /** OCPP 2.0.1 only (ReserveNow connectorType): the caller refuses it for a 1.6 charger. Sent, not kept. */
  readonly connectorType?: string;
}

export interface ReserveNowResult {
  readonly request: Record<string, unknown>;
  readonly outcome: OperationOutcome;
  readonly reservation: ReservationRecord;
}

export type CancelResult =
  | { readonly kind: 'unknown' }
  | { readonly kind: 'sent'; readonly request: Record<string, unknown>; readonly outcome: OperationOutcome; readonly reservation: ReservationRecord };

/** How a ReserveNow outcome ends the reservation at once; null: it stays open (Accepted, or no answer: the charger may hold it). */
function endOfReserveNow(outcome: OperationOutcome): string | null {
  switch (outcome.kind) {
    case 'answered':
      return outcome.answer.status === 'Accepted' ? null : 'refused';
    case 'call-error':
    case 'invalid-answer':
      return 'refused';
    case 'unknown-charger':
    case 'not-connected':
    case 'invalid-request':
    case 'fuse-call-in-flight':
    case 'not-in-protocol':
      return 'not-sent';
    case 'timeout':
    case 'failed':
      return null;
  }
}

/** Ends that settle a reservation for good: its transaction, or the charger's Accepted cancel. */
const cancellable = (r: ReservationRecord) => r.endReason !== 'transaction' && r.endReason !== 'cancelled';

const sameTag = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

export class ChargerReservations {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly ops: ChargerOperationsPort,
    private readonly store: ReservationStore,
    private readonly writes: StoreWriteQueue,
    private readonly nowMs: () => number,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.sweepExpired(), EXPIRY_SWEEP_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** The charger's reservations in force (open, not expired), oldest first. */
  active(chargePointId: string): ReservationRecord[] {
    const now = this.nowMs();
    return this.store.open(chargePointId).filter((r) => r.expiryAtMs > now);
  }

  /** Allocates a reservationId, sends ReserveNow, keeps what the charger answered; null while the store refuses writes (nothing sent). */
  async reserve(chargePointId: string, r: ReservationRequest): Promise<ReserveNowResult | null> {
    // The reservationId is a row of ours: without a store that takes writes there is none to give.
    if (this.writes.refusing) return null;
    const requestedAtMs = this.nowMs();
    const created = { chargePointId, connectorId: r.connectorId, idTag: r.idTag, parentIdTag: r.parentIdTag, expiryAtMs: r.expiryAtMs, requestedAtMs };
    const reservationId = await this.writes.run(`reservation for ${chargePointId}`, () => this.store.create(created));
    const request: Record<string, unknown> = {
      connectorId: r.connectorId,
      expiryDate: new Date(r.expiryAtMs).toISOString(),
      idTag: r.idTag,
      ...(r.parentIdTag === null ? {} : { parentIdTag: r.parentIdTag }),
      reservationId,
    };
    const outcome = await this.ops.call(chargePointId, 'ReserveNow', request, r.connectorType === undefined ? {} : { only201: { connectorType: r.connectorType } });
    const atMs = this.nowMs();
    const answerStatus = outcome.kind === 'answered' ? String(outcome.answer.status) : null;
    const endReason = endOfReserveNow(outcome);
    // Not awaited: while the store refuses writes the answer waits in the queue, not the operator.
    this.writes
      .run(`ReserveNow answer of ${chargePointId}`, () => {
        if (answerStatus !== null) this.store.answered(reservationId, answerStatus);
        if (endReason !== null) this.store.end(reservationId, endReason, atMs);
      })
      .catch((err: unknown) => this.logger.error({ err, charge_point_id: chargePointId, reservation_id: reservationId }, 'ReserveNow answer not stored'));
    const reservation: ReservationRecord = { ...created, reservationId, answerStatus, endedAtMs: endReason === null ? null : atMs, endReason, transactionId: null };
    this.logger.info({ charge_point_id: chargePointId, reservation_id: reservationId, connector_id: r.connectorId, outcome: outcome.kind, status: answerStatus, expiry: request.expiryDate }, 'ReserveNow sent');
    return { request, outcome, reservation };
  }

  /**
   * Sends CancelReservation for one of the charger's reservations not ended by its
   * transaction or a cancel (the charger may hold one the gateway ended on its own view);
   * 'unknown' when it has none such by that id.
   */
  async cancel(chargePointId: string, reservationId: number): Promise<CancelResult> {
    const held = this.store.get(reservationId);
    if (!held || held.chargePointId !== chargePointId || !cancellable(held)) return { kind: 'unknown' };
    const request = { reservationId };
    const outcome = await this.ops.call(chargePointId, 'CancelReservation', request);
    if (outcome.kind !== 'answered') return { kind: 'sent', request, outcome, reservation: held };
    const accepted = outcome.answer.status === 'Accepted';
    // Rejected: the charger holds no reservation by that id (it expired or ended there): not in force either way; an end already kept stays.
    if (!accepted && held.endedAtMs !== null) return { kind: 'sent', request, outcome, reservation: held };
    const endReason = accepted ? 'cancelled' : 'cancel-rejected';
    const atMs = this.nowMs();
    this.writes
      .run(`CancelReservation answer of ${chargePointId}`, () => {
        if (held.endedAtMs === null) {
          this.store.end(reservationId, endReason, atMs);
          return;
        }
        // Ended on the gateway's view, held by the charger until now: cancelled (unless its transaction came meanwhile).
        const now = this.store.get(reservationId);
        if (now && cancellable(now)) this.store.reend(reservationId, endReason, atMs);
      })
      .catch((err: unknown) => this.logger.error({ err, charge_point_id: chargePointId, reservation_id: reservationId }, 'CancelReservation answer not stored'));
    return { kind: 'sent', request, outcome, reservation: { ...held, endedAtMs: atMs, endReason } };
  }

  /**
   * A transaction started (inside the StartTransaction handler's store unit): the
   * reservation it names ends (one naming a reservation not open ends none), and, when
   * the charger left the reservationId out, one of the same idTag on its connector (or on
   * connector 0).
   */
  transactionStarted(chargePointId: string, t: { connectorId: number; idTag: string; reservationId: number | null; transactionId: number }, atMs: number): void {
    const open = this.store.open(chargePointId);
    const named = t.reservationId === null ? undefined : open.find((r) => r.reservationId === t.reservationId);
    // A connector-0 reservation shown on two connectors: the driver takes one (Preparing), the charger frees the other
    // (Reserved -> Available), which ended it as released-by-charger here; its transaction then names it. It ended by that transaction.
    if (t.reservationId !== null && !named && this.reendReleased(chargePointId, t.reservationId, t.connectorId, t.transactionId, atMs)) return;
    if (t.reservationId !== null && !named) {
      this.logger.warn({ charge_point_id: chargePointId, reservation_id: t.reservationId, transaction_id: t.transactionId }, 'StartTransaction names a reservation this charger has not open; transaction kept as any other');
    }
    // By id tag only when the charger left the reservationId out: one naming another reservation is not this one.
    const ended = t.reservationId !== null ? named : open.find((r) => (r.connectorId === 0 || r.connectorId === t.connectorId) && sameTag(r.idTag, t.idTag));
    if (ended && this.store.end(ended.reservationId, 'transaction', atMs, t.transactionId)) {
      this.logger.info({ charge_point_id: chargePointId, reservation_id: ended.reservationId, transaction_id: t.transactionId }, 'reservation ended by its transaction');
    }
  }

  /** A reservation of this charger (its connector or connector 0) ended as released-by-charger, ended by the transaction instead. */
  private reendReleased(chargePointId: string, reservationId: number, connectorId: number, transactionId: number, atMs: number): boolean {
    const r = this.store.get(reservationId);
    if (!r || r.chargePointId !== chargePointId || (r.connectorId !== 0 && r.connectorId !== connectorId) || r.endReason !== 'released-by-charger') return false;
    if (!this.store.reendByTransaction(reservationId, 'released-by-charger', atMs, transactionId)) return false;
    this.logger.info({ charge_point_id: chargePointId, reservation_id: reservationId, transaction_id: transactionId }, 'reservation released by the charger on another connector ended by its transaction');
    return true;
  }

  /**
   * A connector's status (inside the StatusNotification handler's unit): Faulted or
   * Unavailable ends its reservations (connector 0: all of the charger's); Reserved ->
   * Available without a transaction is the charger ending one on its own (it expired on its
   * clock, or was cancelled at the charger): the connector's (connector 0's) end too, but
   * only those requested before that Reserved was received: a reservation requested after
   * it (reserve, cancel, reserve again) may cross the Available the cancel caused, and the
   * charger holds it.
   *
   * A reservation of connector 0 (OCPP 1.6 5.13: the charger keeps one connector available
   * for it, and may show Reserved on one connector or on all) is shown on real connectors
   * only, so a real connector's Reserved -> Available that ends no reservation of its own
   * ends connector-0 ones: as many as the charger no longer shows, that is those beyond the
   * real connectors still Reserved for no reservation of their own (`reservedNow`: the
   * charger's real connectors whose stored status is Reserved, this one excluded). One shown
   * on all connectors ends with the last of them; past their expiry first, then the oldest.
   */
  connectorStatus(chargePointId: string, connectorId: number, status: string, previous: { status: string; receivedAtMs: number } | null, atMs: number, reservedNow: () => readonly number[]): void {
    const notAvailable = status === 'Faulted' || status === 'Unavailable';
    const released = status === 'Available' && previous?.status === 'Reserved';
    if (!notAvailable && !released) return;
    const reason = released ? 'released-by-charger' : `connector-${status.toLowerCase()}`;
    const open = this.store.open(chargePointId);
    const ending: ReservationRecord[] = [];
    for (const r of open) {
      if (connectorId !== 0 && r.connectorId !== connectorId) continue;
      if (released && (r.connectorId !== connectorId || r.requestedAtMs > previous.receivedAtMs)) continue;
      ending.push(r);
    }
    if (released && connectorId !== 0 && ending.length === 0) {
      const wholeCharger = open
        .filter((r) => r.connectorId === 0 && r.requestedAtMs <= previous.receivedAtMs)
        .sort((a, b) => Number(b.expiryAtMs <= atMs) - Number(a.expiryAtMs <= atMs) || a.reservationId - b.reservationId);
      const ownConnectors = new Set(open.filter((r) => r.connectorId !== 0).map((r) => r.connectorId));
      const stillShown = reservedNow().filter((c) => c !== connectorId && c !== 0 && !ownConnectors.has(c)).length;
      ending.push(...wholeCharger.slice(0, Math.max(0, wholeCharger.length - stillShown)));
    }
    for (const r of ending) {
      // Past its expiry the charger let it lapse: expired, at its expiry.
      const lapsed = released && r.expiryAtMs <= atMs;
      if (this.store.end(r.reservationId, lapsed ? 'expired' : reason, lapsed ? r.expiryAtMs : atMs)) {
        this.logger.info({ charge_point_id: chargePointId, reservation_id: r.reservationId, reserved_connector_id: r.connectorId, connector_id: connectorId, status, reason }, 'reservation ended by its connector\'s status');
      }
    }
  }

  /**
   * OCPP 2.0.1 ReservationStatusUpdate (inside the handler's unit): the station ended one of
   * its reservations on its own. Expired: it lapsed ('expired', at its expiry, or now when the
   * station's clock was ahead of ours); Removed: the station dropped it (its EVSE turned
   * Faulted or Unavailable, TC_H_20, or it was cancelled at the station):
   * 'released-by-charger', as a 1.6 charger's Reserved -> Available. A 2.0.1 station says so
   * instead of leaving its connector's status to be read (1.6, connectorStatus). One not open
   * (ended here already, another charger's, unknown) changes nothing.
   */
  stationEnded(chargePointId: string, reservationId: number, status: 'Expired' | 'Removed', atMs: number): void {
    const r = this.store.get(reservationId);
    if (!r || r.chargePointId !== chargePointId || r.endedAtMs !== null) {
      this.logger.info({ charge_point_id: chargePointId, reservation_id: reservationId, status, known: r?.chargePointId === chargePointId, end_reason: r?.chargePointId === chargePointId ? r.endReason : undefined }, 'ReservationStatusUpdate for a reservation not open here; nothing changed');
      return;
    }
    const reason = status === 'Expired' ? 'expired' : 'released-by-charger';
    const endedAtMs = status === 'Expired' ? Math.min(r.expiryAtMs, atMs) : atMs;
    if (this.store.end(reservationId, reason, endedAtMs)) this.logger.info({ charge_point_id: chargePointId, reservation_id: reservationId, status, reason }, 'reservation ended by the station');
  }

  /** Ends the reservations whose expiryDate has passed (the charger dropped them too). */
  async sweepExpired(): Promise<void> {
    const now = this.nowMs();
    // The read too: a store error is logged, the next sweep tries again (a timer's promise has no one to reject to).
    try {
      const expired = this.store.allOpen().filter((r) => r.expiryAtMs <= now);
      if (expired.length === 0) return;
      await this.writes.run('expired reservations', () => {
        for (const r of expired) this.store.end(r.reservationId, 'expired', r.expiryAtMs);
      });
      for (const r of expired) this.logger.info({ charge_point_id: r.chargePointId, reservation_id: r.reservationId }, 'reservation expired');
    } catch (err) {
      this.logger.warn({ err: { message: (err as Error).message } }, 'expired reservations not ended; tried again at the next sweep');
    }
  }
}
