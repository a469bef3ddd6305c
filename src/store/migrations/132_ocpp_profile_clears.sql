-- ClearChargingProfile requests for the profiles the gateway set (by the ids it used), and
-- the charger's answer, kept as SetChargingProfile answers are (ocpp_charging_profiles):
-- one row per connector and profile id, the newest request replacing an older one. A
-- charger that is not connected gets a pending clear when it connects again.
CREATE TABLE ocpp_profile_clears (
  charge_point_id     TEXT    NOT NULL,
  connector_id        INTEGER NOT NULL,
  charging_profile_id INTEGER NOT NULL,
  -- target-deleted (DELETE …/plan) or transaction-stopped.
  reason              TEXT    NOT NULL,
  requested_at_ms     INTEGER NOT NULL,
  sent_at_ms          INTEGER,
  -- pending (not sent yet: the charger was not connected), Accepted, Unknown (the charger's
  -- answer), or error (no answer: see error).
  status              TEXT    NOT NULL,
  error               TEXT,
  PRIMARY KEY (charge_point_id, connector_id, charging_profile_id)
) WITHOUT ROWID;
