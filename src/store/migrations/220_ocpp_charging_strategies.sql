-- Chargers that say no (docs/chargers.md "Chargers that say no"): what a charger refused
-- when the gateway sent it a charging profile, per strategy (ocpp/charging-strategy.ts;
-- 'all-profiles' when it refused SetChargingProfile outright), so a later plan, and a
-- pause above all, goes by what it accepts; and the strategy in force per connector, why,
-- and the transaction the gateway stopped to pause the car (remote-start-stop), which
-- does not end the connector's target.
CREATE TABLE ocpp_charger_refusals (
  charge_point_id TEXT    NOT NULL,
  strategy        TEXT    NOT NULL,
  -- Rejected, NotSupported, or the CallError code (NotImplemented, ...).
  answer          TEXT    NOT NULL,
  at_ms           INTEGER NOT NULL,
  PRIMARY KEY (charge_point_id, strategy)
) WITHOUT ROWID;

CREATE TABLE ocpp_charging_strategies (
  charge_point_id       TEXT    NOT NULL,
  connector_id          INTEGER NOT NULL,
  strategy              TEXT    NOT NULL,
  reason                TEXT    NOT NULL,
  chosen_at_ms          INTEGER NOT NULL,
  paused_transaction_id INTEGER,
  PRIMARY KEY (charge_point_id, connector_id)
) WITHOUT ROWID;

-- A ChargePointMaxProfile is now a profile the gateway sends (a CHECK cannot be altered in SQLite: the table is built again).
CREATE TABLE ocpp_charging_profiles_new (
  charge_point_id     TEXT    NOT NULL,
  connector_id        INTEGER NOT NULL,
  purpose             TEXT    NOT NULL CHECK (purpose IN ('TxProfile', 'TxDefaultProfile', 'ChargePointMaxProfile')),
  transaction_id      INTEGER,
  charging_profile_id INTEGER NOT NULL,
  planned_at_ms       INTEGER NOT NULL,
  sent_at_ms          INTEGER NOT NULL,
  status              TEXT    NOT NULL,
  error               TEXT,
  periods             INTEGER NOT NULL,
  request_json        TEXT    NOT NULL,
  PRIMARY KEY (charge_point_id, connector_id)
) WITHOUT ROWID;
INSERT INTO ocpp_charging_profiles_new SELECT charge_point_id, connector_id, purpose, transaction_id, charging_profile_id, planned_at_ms, sent_at_ms, status, error, periods, request_json FROM ocpp_charging_profiles;
DROP TABLE ocpp_charging_profiles;
ALTER TABLE ocpp_charging_profiles_new RENAME TO ocpp_charging_profiles;
