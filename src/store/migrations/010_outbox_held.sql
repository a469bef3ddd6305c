-- Messages taken out of the outbox's sending order but never deleted before delivery
-- (docs/uplink.md, "Refused messages"): the broker refused them for good (MQTT 5 PUBACK
-- 0x87 not authorized, 0x90 topic name invalid, 0x99 payload format invalid; reason
-- 'refused', with the code) or their timestamp lies ahead of the trusted clock after a
-- clock step (reason 'clock', docs/clock-safety.md). They go back into the outbox, with
-- the id they had, when retried: after every reconnect and on `metergate outbox retry`.
-- Only the outbox bound (store.outbox_max_rows / _bytes, counted over both tables,
-- oldest first) deletes them.
CREATE TABLE outbox_held (
  id            INTEGER PRIMARY KEY,         -- the outbox id it had (outbox ids are never reused)
  message_id    TEXT    NOT NULL,
  topic         TEXT    NOT NULL,
  payload       TEXT    NOT NULL,
  bytes         INTEGER NOT NULL,
  qos           INTEGER NOT NULL,
  retain        INTEGER NOT NULL,
  stamped_at_ms INTEGER NOT NULL,
  created_at_ms INTEGER NOT NULL,
  reason        TEXT    NOT NULL CHECK (reason IN ('refused', 'clock')),
  reason_code   INTEGER,                     -- the PUBACK reason code (reason 'refused')
  held_at_ms    INTEGER NOT NULL
);
CREATE INDEX outbox_held_by_topic ON outbox_held (reason, topic, id);

-- `metergate outbox retry` asks the running daemon through this table (it polls it).
CREATE TABLE outbox_retry_requests (
  requested_at_ms INTEGER NOT NULL,
  include_clock   INTEGER NOT NULL DEFAULT 0  -- also release messages held for their timestamp
);
