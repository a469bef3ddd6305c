-- Backfill chunks (closed local months) whose prices are not complete after a fetch: an
-- acknowledgement without data, a partial answer, or a failed request. Each is retried
-- with backoff on later runs until complete; then its row moves to price_fetch_chunks.
CREATE TABLE price_fetch_pending (
  market_area         TEXT    NOT NULL,
  source              TEXT    NOT NULL,
  from_ms             INTEGER NOT NULL,
  to_ms               INTEGER NOT NULL,
  attempts            INTEGER NOT NULL,
  missing_s           INTEGER NOT NULL,  -- time without a price in the chunk after the last attempt
  first_gap_ms        INTEGER,
  problem             TEXT    NOT NULL,  -- why the last attempt left it incomplete
  last_attempt_at_ms  INTEGER NOT NULL,
  next_attempt_at_ms  INTEGER NOT NULL,
  PRIMARY KEY (market_area, source, from_ms, to_ms)
) WITHOUT ROWID;

-- Chunks recorded done before completeness was checked (e.g. "no matching data") are done
-- no longer, so the next run fetches them again. Periods never cross a chunk boundary (local
-- midnight), so a chunk is complete exactly when its periods add up to its length.
DELETE FROM price_fetch_chunks
 WHERE (to_ms - from_ms) > (SELECT coalesce(sum(p.duration_s), 0) * 1000 FROM prices p
                             WHERE p.market_area = price_fetch_chunks.market_area
                               AND p.start_ms >= price_fetch_chunks.from_ms AND p.start_ms < price_fetch_chunks.to_ms);
