-- The last charging profile the gateway sent for a connector's plan (SetChargingProfile)
-- and the charger's answer, so the plan's GET can say whether the charger took it.
CREATE TABLE ocpp_charging_profiles (
  charge_point_id     TEXT    NOT NULL,
  connector_id        INTEGER NOT NULL,
  purpose             TEXT    NOT NULL CHECK (purpose IN ('TxProfile', 'TxDefaultProfile')),
  transaction_id      INTEGER,
  charging_profile_id INTEGER NOT NULL,
  planned_at_ms       INTEGER NOT NULL,
  sent_at_ms          INTEGER NOT NULL,
  -- Accepted, Rejected, NotSupported (the charger's answer), or error (no answer: see error).
  status              TEXT    NOT NULL,
  error               TEXT,
  periods             INTEGER NOT NULL,
  request_json        TEXT    NOT NULL,
  PRIMARY KEY (charge_point_id, connector_id)
) WITHOUT ROWID;
