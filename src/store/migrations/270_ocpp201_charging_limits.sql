-- What an OCPP 2.0.1 station reports of the limits on its charging (Part 2 block K):
-- ocpp201_external_limits: a limit set by a system other than the gateway (NotifyChargingLimit,
-- K12: an EMS, the grid operator, a local controller), one row per station, EVSE (0: the
-- whole station) and source, replaced by the next and removed by ClearedChargingLimit (K13).
-- The gateway plans the connector within it (planning/external-limit.ts).
CREATE TABLE ocpp201_external_limits (
  charge_point_id TEXT    NOT NULL,
  evse_id         INTEGER NOT NULL,
  -- chargingLimitSource: EMS, Other, SO, CSO.
  source          TEXT    NOT NULL,
  grid_critical   INTEGER,
  -- The chargingSchedule array as sent (JSON), NULL when the notification carried none.
  schedule_json   TEXT,
  received_at_ms  INTEGER NOT NULL,
  PRIMARY KEY (charge_point_id, evse_id, source)
);
-- ocpp201_reported_profiles: the charging profiles a station reported in answer to a
-- GetChargingProfiles (ReportChargingProfiles, K09), one row per message, as sent; the
-- newest MAX_REPORTS_PER_CHARGER per station kept (store/ocpp201-charging-limits.ts).
CREATE TABLE ocpp201_reported_profiles (
  id              INTEGER PRIMARY KEY,
  charge_point_id TEXT    NOT NULL,
  request_id      INTEGER NOT NULL,
  evse_id         INTEGER NOT NULL,
  source          TEXT    NOT NULL,
  profiles_json   TEXT    NOT NULL,
  received_at_ms  INTEGER NOT NULL
);
CREATE INDEX ocpp201_reported_profiles_request ON ocpp201_reported_profiles (charge_point_id, request_id);
