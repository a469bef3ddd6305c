-- The outbox without AUTOINCREMENT, and measurements by reference (SD-card wear,
-- docs/uplink.md). Every commit that added a row also rewrote the sqlite_sequence page (one
-- more page written per poll tick).
-- Ids still never come back while the process runs (the publisher's cursors rely on it):
-- Outbox assigns them itself, from the highest id in outbox and outbox_held read at start.
-- An id may come back after a restart with both tables empty; nothing outlives the process
-- that knew the old one (subscribers deduplicate on message_id, a UUID).
CREATE TABLE outbox_next (
  id            INTEGER PRIMARY KEY,
  message_id    TEXT    NOT NULL,
  topic         TEXT    NOT NULL,
  payload       TEXT    NOT NULL,
  bytes         INTEGER NOT NULL,
  qos           INTEGER NOT NULL DEFAULT 1,
  retain        INTEGER NOT NULL DEFAULT 0,
  stamped_at_ms INTEGER NOT NULL,
  created_at_ms INTEGER NOT NULL,
  -- A measurement does not repeat its reading's values (about 1 KB of the payload): its
  -- payload holds `[]` at character metrics_at, where the metrics of the reading
  -- (reading_resource_id, stamped_at_ms) go back when it is read. NULL: the whole payload.
  reading_resource_id TEXT,
  metrics_at    INTEGER
);
INSERT INTO outbox_next (id, message_id, topic, payload, bytes, qos, retain, stamped_at_ms, created_at_ms) SELECT id, message_id, topic, payload, bytes, qos, retain, stamped_at_ms, created_at_ms FROM outbox;
DROP TABLE outbox;
ALTER TABLE outbox_next RENAME TO outbox;
