-- Signed meter values a charger sends (OCPP 1.6 SampledValue format SignedData: OCMF and
-- other formats, kept raw as sent) with their transaction, for the cdr's signed_data and
-- its verification (docs/chargers.md "Signed meter values", issue 32). Kept as long as the
-- transaction (a billing dispute needs them); values of no transaction go after a day,
-- as their unsigned neighbours in ocpp_meter_values do. At most a bounded number per
-- transaction (ocpp/signed-values.ts).
CREATE TABLE ocpp_signed_values (
  charge_point_id TEXT    NOT NULL,
  connector_id    INTEGER NOT NULL,
  -- NULL: sent for no transaction (or one this charger does not have).
  transaction_id  INTEGER,
  sampled_at_ms   INTEGER NOT NULL,
  -- OCPP ReadingContext ('' when none), measurand as sent (default Energy.Active.Import.Register).
  context         TEXT    NOT NULL,
  measurand       TEXT    NOT NULL,
  value           TEXT    NOT NULL,
  received_at_ms  INTEGER NOT NULL,
  -- 1: received after sessions.late_meter_values_s past the stop: kept as sent, not carried in the cdr.
  after_cut_off   INTEGER NOT NULL DEFAULT 0
);
-- A repeated message adds nothing (as ocpp_meter_values_key).
CREATE UNIQUE INDEX ocpp_signed_values_key ON ocpp_signed_values (charge_point_id, connector_id, ifnull(transaction_id, -1), sampled_at_ms, context, measurand);
CREATE INDEX ocpp_signed_values_tx ON ocpp_signed_values (transaction_id);
CREATE INDEX ocpp_signed_values_loose ON ocpp_signed_values (received_at_ms) WHERE transaction_id IS NULL;
