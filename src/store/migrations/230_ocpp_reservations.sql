-- Reservations (OCPP 1.6 ReserveNow/CancelReservation, docs/chargers.md "Reservations"):
-- the reservationId is ours (AUTOINCREMENT: never handed out twice, not even after a
-- reservation ended), the charger's answer to ReserveNow, and how the reservation ended.
-- Open: ended_at_ms IS NULL (answer_status 'Accepted', or NULL while the charger's answer
-- never came: it may hold it, so it stays open until it expires or is cancelled).
CREATE TABLE ocpp_reservations (
  reservation_id  INTEGER PRIMARY KEY AUTOINCREMENT,
  charge_point_id TEXT    NOT NULL,
  -- 0: any connector of the charger.
  connector_id    INTEGER NOT NULL,
  id_tag          TEXT    NOT NULL,
  parent_id_tag   TEXT,
  expiry_at_ms    INTEGER NOT NULL,
  requested_at_ms INTEGER NOT NULL,
  -- Accepted, Faulted, Occupied, Rejected, Unavailable; NULL: no answer (yet).
  answer_status   TEXT,
  ended_at_ms     INTEGER,
  -- transaction, cancelled, expired, refused, not-sent, connector-faulted, connector-unavailable
  end_reason      TEXT,
  -- The transaction that ended it (end_reason 'transaction').
  transaction_id  INTEGER
);
CREATE INDEX ocpp_reservations_open ON ocpp_reservations (charge_point_id, connector_id) WHERE ended_at_ms IS NULL;
