-- Day-ahead prices at native resolution, UTC. One row per market area and period start.
CREATE TABLE prices (
  market_area     TEXT    NOT NULL,
  start_ms        INTEGER NOT NULL,
  duration_s      INTEGER NOT NULL,
  price_per_mwh   REAL    NOT NULL,
  currency        TEXT    NOT NULL DEFAULT 'EUR',
  source          TEXT    NOT NULL,
  fetched_at_ms   INTEGER NOT NULL,
  PRIMARY KEY (market_area, start_ms)
) WITHOUT ROWID;
