-- Security events a charging station reports (OCPP 2.0.1 SecurityEventNotification, A04;
-- the OCPP 1.6 security extension's message of the same name would land here too): kept for
-- the operator (GET /api/v1/chargers/{id}/security_events, the status page, /metrics), as
-- long as the charger's sessions (store.sessions_retention_days) and at most
-- MAX_SECURITY_EVENTS_PER_CHARGER per charger (store/security-events.ts): a station that
-- reports in a loop cannot fill the disk, its newest events stay.
CREATE TABLE ocpp_security_events (
  id              INTEGER PRIMARY KEY,
  charge_point_id TEXT    NOT NULL,
  -- The subprotocol it came over ('1.6', '2.0.1').
  ocpp_version    TEXT    NOT NULL,
  -- The station's event type (2.0.1 Appendix 1 names the standard ones; any string of up to 50).
  type            TEXT    NOT NULL,
  -- When the station says it happened (its timestamp), and when the gateway stored it.
  occurred_at_ms  INTEGER NOT NULL,
  received_at_ms  INTEGER NOT NULL,
  -- techInfo as sent (up to 255 characters), NULL when none.
  tech_info       TEXT
);
CREATE INDEX ocpp_security_events_charger ON ocpp_security_events (charge_point_id, id);
CREATE INDEX ocpp_security_events_received ON ocpp_security_events (received_at_ms);
