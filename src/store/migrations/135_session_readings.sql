-- A charger session's readings, one row per instant, appended as its MeterValues arrive
-- instead of the whole list rewritten in sessions.readings_json on every message (whose
-- cost grew with the session's length). Keyed by the session and the charger's own
-- timestamp: a late or out-of-order value lands at its instant, a repeat changes nothing.
-- A session with neither resource_id nor readings_json has its readings here.
CREATE TABLE session_readings (
  cpo_transaction_id TEXT    NOT NULL REFERENCES sessions (cpo_transaction_id),
  sampled_at_ms      INTEGER NOT NULL,
  -- Cumulative register reading (kWh, rounded to the Wh/1000 as readings_json was).
  energy_kwh         REAL    NOT NULL,
  PRIMARY KEY (cpo_transaction_id, sampled_at_ms)
) WITHOUT ROWID;

-- Existing charger sessions move their readings here as they are (the same list prices
-- the same); an operator's PUT session keeps readings_json.
INSERT INTO session_readings (cpo_transaction_id, sampled_at_ms, energy_kwh)
SELECT s.cpo_transaction_id, json_extract(r.value, '$[0]'), json_extract(r.value, '$[1]')
FROM sessions s, json_each(s.readings_json) r
WHERE s.readings_json IS NOT NULL
  AND EXISTS (SELECT 1 FROM ocpp_transactions t WHERE s.cpo_transaction_id = t.charge_point_id || '-' || t.transaction_id);

UPDATE sessions SET readings_json = NULL
WHERE readings_json IS NOT NULL
  AND EXISTS (SELECT 1 FROM ocpp_transactions t WHERE sessions.cpo_transaction_id = t.charge_point_id || '-' || t.transaction_id);
