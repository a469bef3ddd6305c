-- What a stored forecast was made from: 'prices + load, solar, ...' with exogenous series,
-- or 'prices only: <why>' (no load forecast for the target day fetched by the origin, ...).
ALTER TABLE forecast_runs ADD COLUMN inputs TEXT NOT NULL DEFAULT 'prices only';
