-- Configuration keys the gateway read from a charger with GetConfiguration after its
-- BootNotification (docs/chargers.md "Schedules in A or W"), e.g.
-- ChargingScheduleAllowedChargingRateUnit, which says whether it takes schedules in A
-- ("Current"), W ("Power") or both. value NULL: the charger does not know the key.
CREATE TABLE ocpp_charger_configuration (
  charge_point_id TEXT    NOT NULL,
  key             TEXT    NOT NULL,
  value           TEXT,
  readonly        INTEGER,
  read_at_ms      INTEGER NOT NULL,
  PRIMARY KEY (charge_point_id, key)
) WITHOUT ROWID;
