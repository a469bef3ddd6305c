-- OCPP 1.6J central system (src/ocpp, docs/chargers.md): what each charger said, committed
-- before it is answered. A charger's transaction is also a row of `sessions`
-- (cpo_transaction_id `<chargePointId>-<transactionId>`), kept in step in the same
-- transaction, so GET /api/v1/cdrs prices it like any other session.
CREATE TABLE ocpp_charge_points (
  charge_point_id TEXT PRIMARY KEY,
  vendor TEXT,
  model TEXT,
  serial_number TEXT,
  firmware_version TEXT,
  booted_at_ms INTEGER,
  last_heartbeat_ms INTEGER
);

CREATE TABLE ocpp_connector_status (
  charge_point_id TEXT NOT NULL,
  connector_id INTEGER NOT NULL,
  status TEXT NOT NULL,
  error_code TEXT NOT NULL,
  info TEXT,
  -- The charger's own time of the status when it sent one, else when we received it.
  status_at_ms INTEGER NOT NULL,
  received_at_ms INTEGER NOT NULL,
  PRIMARY KEY (charge_point_id, connector_id)
);

-- transaction_id is ours (OCPP: the central system assigns it). The unique key is what a
-- charger repeats when it sends the same StartTransaction again after a lost answer.
CREATE TABLE ocpp_transactions (
  transaction_id INTEGER PRIMARY KEY AUTOINCREMENT,
  charge_point_id TEXT NOT NULL,
  connector_id INTEGER NOT NULL,
  id_tag TEXT NOT NULL,
  meter_start_wh INTEGER NOT NULL,
  started_at_ms INTEGER NOT NULL,
  reservation_id INTEGER,
  id_tag_status TEXT NOT NULL,
  meter_stop_wh INTEGER,
  stopped_at_ms INTEGER,
  stop_reason TEXT,
  stop_id_tag TEXT,
  created_at_ms INTEGER NOT NULL,
  UNIQUE (charge_point_id, connector_id, id_tag, meter_start_wh, started_at_ms)
);

-- Every sampled value as sent, stored by its own timestamp (late and out-of-order values
-- land where they belong); a repeated message adds nothing (unique key).
CREATE TABLE ocpp_meter_values (
  charge_point_id TEXT NOT NULL,
  connector_id INTEGER NOT NULL,
  transaction_id INTEGER,
  sampled_at_ms INTEGER NOT NULL,
  measurand TEXT NOT NULL,
  phase TEXT NOT NULL DEFAULT '',
  location TEXT NOT NULL DEFAULT '',
  context TEXT NOT NULL DEFAULT '',
  value REAL NOT NULL,
  unit TEXT NOT NULL,
  received_at_ms INTEGER NOT NULL
);
CREATE UNIQUE INDEX ocpp_meter_values_key ON ocpp_meter_values (charge_point_id, connector_id, ifnull(transaction_id, -1), sampled_at_ms, measurand, phase, location, context);
CREATE INDEX ocpp_meter_values_tx ON ocpp_meter_values (transaction_id, measurand, sampled_at_ms);
