-- The grid operator's dimming events (§14a EnWG, grid/grid-control.ts): evidence for the grid
-- operator (GET /api/v1/grid/dimming_events, docs/grid-limits.md). One row per limit in force;
-- connectors holds each controlled connector's share, limit in force and when it was confirmed
-- (JSON array), filled as the fuse controller confirms them.
CREATE TABLE grid_dimming_events (
  id              INTEGER PRIMARY KEY,
  started_at_ms   INTEGER NOT NULL,
  ended_at_ms     INTEGER,
  limit_w         INTEGER NOT NULL,
  cause           TEXT    NOT NULL CHECK (cause IN ('signal', 'signal-lost')),
  contacts        TEXT,
  confirmed_at_ms INTEGER,
  late            INTEGER NOT NULL DEFAULT 0,
  connectors      TEXT    NOT NULL DEFAULT '[]'
);
CREATE INDEX grid_dimming_events_started ON grid_dimming_events (started_at_ms);
