-- The local authorization list each charger holds (OCPP 1.6 SendLocalList, docs/chargers.md
-- "Local authorization list"): the version it last accepted and the id tags in it, so that
-- a change of the configured id tags is sent as a differential update of the next version.
CREATE TABLE ocpp_local_auth_lists (
  charge_point_id TEXT    PRIMARY KEY,
  list_version    INTEGER NOT NULL,
  -- JSON array of the id tags the charger holds (as configured, sorted).
  id_tags_json    TEXT    NOT NULL,
  updated_at_ms   INTEGER NOT NULL
) WITHOUT ROWID;
