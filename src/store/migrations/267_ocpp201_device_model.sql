-- An OCPP 2.0.1 station's device model (docs/chargers.md "OCPP 2.0.1", issue 33 B07): what it
-- reported in NotifyReport after the gateway's GetBaseReport (asked after its accepted boot,
-- as a 1.6 charger's GetConfiguration is, and by the operator). One row per component,
-- variable and attribute type; a later report's row replaces the earlier one. Absent parts of
-- the identity are '' (instance) and 0 (evse_id, connector_id: 2.0.1 numbers EVSEs and
-- connectors from 1). characteristics_json: the station's variableCharacteristics as sent
-- (already checked against the official schema). Bounded: at most 4,000 rows per station
-- (store/ocpp201-device-model.ts MAX_DEVICE_MODEL_ROWS); more are counted in the report's
-- rows_dropped, not stored.
CREATE TABLE ocpp201_device_model (
  charge_point_id      TEXT    NOT NULL,
  component            TEXT    NOT NULL,
  component_instance   TEXT    NOT NULL DEFAULT '',
  evse_id              INTEGER NOT NULL DEFAULT 0,
  connector_id         INTEGER NOT NULL DEFAULT 0,
  variable             TEXT    NOT NULL,
  variable_instance    TEXT    NOT NULL DEFAULT '',
  attribute_type       TEXT    NOT NULL,
  value                TEXT,
  mutability           TEXT,
  persistent           INTEGER,
  constant             INTEGER,
  characteristics_json TEXT,
  request_id           INTEGER NOT NULL,
  reported_at_ms       INTEGER NOT NULL,
  PRIMARY KEY (charge_point_id, component, component_instance, evse_id, connector_id, variable, variable_instance, attribute_type)
) WITHOUT ROWID;

-- The reports asked for (GetBaseReport) or sent (NotifyReport), the last 10 per station:
-- report_base NULL for a report the gateway did not ask for; status the station's
-- GetBaseReport answer (Accepted, Rejected, NotSupported, EmptyResultSet) or NULL before it;
-- parts the NotifyReport parts received (seqNo 0..last_seq_no), complete once the part with
-- tbc false came and every seqNo before it.
CREATE TABLE ocpp201_reports (
  charge_point_id TEXT    NOT NULL,
  request_id      INTEGER NOT NULL,
  report_base     TEXT,
  requested_at_ms INTEGER,
  status          TEXT,
  parts           INTEGER NOT NULL DEFAULT 0,
  final_seq_no    INTEGER,
  rows_stored     INTEGER NOT NULL DEFAULT 0,
  rows_dropped    INTEGER NOT NULL DEFAULT 0,
  last_part_at_ms INTEGER,
  completed_at_ms INTEGER,
  PRIMARY KEY (charge_point_id, request_id)
) WITHOUT ROWID;
CREATE TABLE ocpp201_report_parts (
  charge_point_id TEXT    NOT NULL,
  request_id      INTEGER NOT NULL,
  seq_no          INTEGER NOT NULL,
  PRIMARY KEY (charge_point_id, request_id, seq_no),
  FOREIGN KEY (charge_point_id, request_id) REFERENCES ocpp201_reports (charge_point_id, request_id) ON DELETE CASCADE
) WITHOUT ROWID;
