// OCPP 2.0.1 reservations from the station's side (Part 2, block H): ReservationStatusUpdate
// (H04: the station ended a reservation on its own, Expired or Removed) ends the reservation
// the gateway keeps (reservations.ts stationEnded), in the handler's unit as every write.
// ReserveNow and CancelReservation are the operator's (v201/operations/), and a
// TransactionEvent naming a reservation ends it (transactions.ts), as a 1.6 StartTransaction.
import { boundedId, registeredOnly, type Connection201 } from './connection.js';

interface ReservationStatusUpdate201 {
  readonly reservationId: number;
  readonly reservationUpdateStatus: 'Expired' | 'Removed';
}

export function registerReservations(c: Connection201): void {
  const { id } = c.tools;
  registeredOnly(c)(
    'ReservationStatusUpdate',
    (p: ReservationStatusUpdate201) => {
      c.reservations.stationEnded(id, boundedId(p.reservationId, 'reservationId'), p.reservationUpdateStatus, c.ctx.clock.now());
      return {};
    },
    // Answered while the store refuses the unit: the station does not send it again; it is written once the store takes it.
    { whileQueued: () => ({}) },
  );
}
