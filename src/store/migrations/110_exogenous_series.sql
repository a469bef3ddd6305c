-- Exogenous inputs of the forecaster: day-ahead forecasts of total load, solar, onshore and
-- offshore wind per market area, in MW, UTC, at the resolution they were published in, with
-- where they came from and when they were fetched (the forecaster uses a value only if it
-- was fetched by the forecast's origin). One row per market area, series and period start.
CREATE TABLE exogenous_series (
  market_area    TEXT    NOT NULL,
  series         TEXT    NOT NULL,   -- load | solar | wind_onshore | wind_offshore
  start_ms       INTEGER NOT NULL,
  duration_s     INTEGER NOT NULL,
  value_mw       REAL    NOT NULL,
  source         TEXT    NOT NULL,   -- entsoe, csv:<file name>, ...
  fetched_at_ms  INTEGER NOT NULL,
  PRIMARY KEY (market_area, series, start_ms)
) WITHOUT ROWID;
