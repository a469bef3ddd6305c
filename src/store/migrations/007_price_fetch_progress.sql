-- Backfill progress: one row per completed fetch chunk (a closed range of past delivery
-- days), written in the same transaction as its prices, so a backfill killed at any
-- point resumes without fetching a completed chunk again.
CREATE TABLE price_fetch_chunks (
  market_area   TEXT    NOT NULL,
  source        TEXT    NOT NULL,
  from_ms       INTEGER NOT NULL,
  to_ms         INTEGER NOT NULL,
  periods       INTEGER NOT NULL,
  fetched_at_ms INTEGER NOT NULL,
  PRIMARY KEY (market_area, source, from_ms, to_ms)
) WITHOUT ROWID;
