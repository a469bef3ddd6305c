-- The ClearCache the gateway owes a charger (docs/chargers.md "Local authorization list"):
-- id tags were removed (SIGHUP reload) and the charger's authorization cache could still
-- accept them offline. Kept until the charger answers a ClearCache sent after the removal,
-- so a restart in between does not forget it.
CREATE TABLE ocpp_clear_cache_owed (
  charge_point_id TEXT    PRIMARY KEY,
  -- When the latest removal was read: a ClearCache sent before it does not pay it.
  owed_since_ms   INTEGER NOT NULL
) WITHOUT ROWID;
