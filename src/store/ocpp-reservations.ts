// The reservations the central system made (migration 230): persistence only; what a
// reservation is for and when it ends is ocpp/reservations.ts.
import type { Db } from './db.js';

export interface NewReservation {
  readonly chargePointId: string;
  readonly connectorId: number;
  readonly idTag: string;
  readonly parentIdTag: string | null;
  readonly expiryAtMs: number;
  readonly requestedAtMs: number;
}

export interface ReservationRecord extends NewReservation {
  readonly reservationId: number;
  /** The charger's ReserveNow answer; null while none came. */
  readonly answerStatus: string | null;
  readonly endedAtMs: number | null;
  readonly endReason: string | null;
  readonly transactionId: number | null;
}

interface Row {
  reservation_id: number;
  charge_point_id: string;
  connector_id: number;
  id_tag: string;
  parent_id_tag: string | null;
  expiry_at_ms: number;
  requested_at_ms: number;
  answer_status: string | null;
  ended_at_ms: number | null;
  end_reason: string | null;
  transaction_id: number | null;
}

const toRecord = (r: Row): ReservationRecord => ({
  reservationId: r.reservation_id,
  chargePointId: r.charge_point_id,
  connectorId: r.connector_id,
  idTag: r.id_tag,
  parentIdTag: r.parent_id_tag,
  expiryAtMs: r.expiry_at_ms,
  requestedAtMs: r.requested_at_ms,
  answerStatus: r.answer_status,
  endedAtMs: r.ended_at_ms,
  endReason: r.end_reason,
  transactionId: r.transaction_id,
});

export class ReservationStore {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      create: db.prepare(
        'INSERT INTO ocpp_reservations (charge_point_id, connector_id, id_tag, parent_id_tag, expiry_at_ms, requested_at_ms) VALUES (@chargePointId, @connectorId, @idTag, @parentIdTag, @expiryAtMs, @requestedAtMs)',
      ),
      answered: db.prepare('UPDATE ocpp_reservations SET answer_status = ? WHERE reservation_id = ?'),
      end: db.prepare('UPDATE ocpp_reservations SET ended_at_ms = @atMs, end_reason = @reason, transaction_id = @transactionId WHERE reservation_id = @reservationId AND ended_at_ms IS NULL'),
      reend: db.prepare('UPDATE ocpp_reservations SET ended_at_ms = @atMs, end_reason = @reason WHERE reservation_id = @reservationId'),
      reendByTransaction: db.prepare("UPDATE ocpp_reservations SET ended_at_ms = @atMs, end_reason = 'transaction', transaction_id = @transactionId WHERE reservation_id = @reservationId AND end_reason = @was"),
      get: db.prepare<[number], Row>('SELECT * FROM ocpp_reservations WHERE reservation_id = ?'),
      open: db.prepare<[string], Row>('SELECT * FROM ocpp_reservations WHERE charge_point_id = ? AND ended_at_ms IS NULL ORDER BY reservation_id'),
      allOpen: db.prepare<[], Row>('SELECT * FROM ocpp_reservations WHERE ended_at_ms IS NULL ORDER BY reservation_id'),
    };
  }

  /** Stores a new reservation; its reservationId. */
  create(r: NewReservation): number {
    return Number(this.stmts.create.run(r).lastInsertRowid);
  }

  answered(reservationId: number, status: string): void {
    this.stmts.answered.run(status, reservationId);
  }

  /** Ends an open reservation; false when it was not open. */
  end(reservationId: number, reason: string, atMs: number, transactionId: number | null = null): boolean {
    return this.stmts.end.run({ reservationId, reason, atMs, transactionId }).changes > 0;
  }

  /** Replaces how a reservation ended (or ends an open one). */
  reend(reservationId: number, reason: string, atMs: number): void {
    this.stmts.reend.run({ reservationId, reason, atMs });
  }

  /** Replaces an end of reason `was` by the transaction that used the reservation; false when it did not end so. */
  reendByTransaction(reservationId: number, was: string, atMs: number, transactionId: number): boolean {
    return this.stmts.reendByTransaction.run({ reservationId, was, atMs, transactionId }).changes > 0;
  }

  get(reservationId: number): ReservationRecord | undefined {
    const r = this.stmts.get.get(reservationId);
    return r ? toRecord(r) : undefined;
  }

  /** The charger's open reservations (expired ones included until they are ended), oldest first. */
  open(chargePointId: string): ReservationRecord[] {
    return this.stmts.open.all(chargePointId).map(toRecord);
  }

  /** Every charger's open reservations. */
  allOpen(): ReservationRecord[] {
    return this.stmts.allOpen.all().map(toRecord);
  }
}
