-- A settled charger session keeps only the readings its price depends on (the reading next
-- to each quarter-hour boundary, pricing/reading-thinning.ts): set once the retention job
-- (ops/retention) has thinned them, so each session is thinned once.
ALTER TABLE ocpp_transactions ADD COLUMN readings_thinned INTEGER NOT NULL DEFAULT 0;
