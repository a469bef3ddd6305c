-- The latest price forecast per market area, at the model's resolution, in UTC. Replaced
-- as a whole by each recomputation; the endpoint only reads it.
CREATE TABLE forecast_runs (
  market_area     TEXT    PRIMARY KEY,
  origin_day      TEXT    NOT NULL,   -- last local delivery day with known prices (YYYY-MM-DD)
  computed_at_ms  INTEGER NOT NULL,
  method          TEXT    NOT NULL,
  coverage        REAL    NOT NULL    -- nominal coverage of the bounds, e.g. 0.8
);

CREATE TABLE forecasts (
  market_area     TEXT    NOT NULL,
  start_ms        INTEGER NOT NULL,
  duration_s      INTEGER NOT NULL,
  forecast_per_mwh REAL   NOT NULL,
  lower_per_mwh   REAL    NOT NULL,
  upper_per_mwh   REAL    NOT NULL,
  PRIMARY KEY (market_area, start_ms)
) WITHOUT ROWID;
