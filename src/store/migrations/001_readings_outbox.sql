-- Every accepted meter sample, kept for session pricing (retention is configurable).
CREATE TABLE readings (
  resource_id    TEXT    NOT NULL,
  sampled_at_ms  INTEGER NOT NULL,
  energy_import_wh REAL,
  power_w        REAL,
  metrics_json   TEXT    NOT NULL,
  PRIMARY KEY (resource_id, sampled_at_ms)
) WITHOUT ROWID;

-- Messages waiting for the broker's PUBACK, oldest first. A row is deleted only after
-- its PUBACK, so SQLite (not mqtt.js's in-memory store) is the source of truth.
CREATE TABLE outbox (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  topic      TEXT    NOT NULL,
  payload    TEXT    NOT NULL,
  qos        INTEGER NOT NULL DEFAULT 1,
  retain     INTEGER NOT NULL DEFAULT 0,
  created_at_ms INTEGER NOT NULL
);
