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
-- AUTOINCREMENT: ids never come back after the table empties, so the publisher's
-- "everything up to id N was dispatched" cursor stays valid.
CREATE TABLE outbox (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  message_id    TEXT    NOT NULL,            -- MQTT 5 user property, for subscriber dedup
  topic         TEXT    NOT NULL,
  payload       TEXT    NOT NULL,
  bytes         INTEGER NOT NULL,            -- UTF-8 size of payload + topic, for the byte bound
  qos           INTEGER NOT NULL DEFAULT 1,
  retain        INTEGER NOT NULL DEFAULT 0,
  stamped_at_ms INTEGER NOT NULL,            -- the message's own timestamp (sampled_at, booted_at, ...)
  created_at_ms INTEGER NOT NULL
);
