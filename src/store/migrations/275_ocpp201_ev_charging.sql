-- ISO 15118 through OCPP 2.0.1 (issue 33, docs/chargers.md "A car's own needs"): the car
-- itself reports when it leaves and how much energy it needs (NotifyEVChargingNeeds), and
-- that becomes the connector's target, so a target's source can now be the car ('ev').
-- SQLite cannot change a CHECK in place: the table is made again with the same rows.
CREATE TABLE charging_targets_next (
  charge_point_id   TEXT    NOT NULL,
  connector_id      INTEGER NOT NULL CHECK (connector_id >= 1),
  market_area       TEXT    NOT NULL,
  departure_ms      INTEGER NOT NULL,
  energy_wh         REAL    NOT NULL CHECK (energy_wh > 0),
  max_current_a     REAL    NOT NULL CHECK (max_current_a > 0),
  min_current_a     REAL    NOT NULL CHECK (min_current_a >= 0),
  phases            INTEGER NOT NULL CHECK (phases IN (1, 3)),
  voltage_v         REAL    NOT NULL CHECK (voltage_v > 0),
  site_limit_a      REAL,
  site_other_load_a REAL,
  updated_at_ms     INTEGER NOT NULL,
  ended_at_ms       INTEGER,
  -- client: PUT …/plan; default: the connector's configured default target; ev: the car's own
  -- needs (NotifyEVChargingNeeds). A client's PUT replaces a default or a car's target.
  source            TEXT    NOT NULL DEFAULT 'client' CHECK (source IN ('client', 'default', 'ev')),
  PRIMARY KEY (charge_point_id, connector_id)
) WITHOUT ROWID;
INSERT INTO charging_targets_next (charge_point_id, connector_id, market_area, departure_ms, energy_wh, max_current_a, min_current_a, phases, voltage_v, site_limit_a, site_other_load_a, updated_at_ms, ended_at_ms, source)
  SELECT charge_point_id, connector_id, market_area, departure_ms, energy_wh, max_current_a, min_current_a, phases, voltage_v, site_limit_a, site_other_load_a, updated_at_ms, ended_at_ms, source FROM charging_targets;
DROP TABLE charging_targets;
ALTER TABLE charging_targets_next RENAME TO charging_targets;

-- What each EVSE's car said last (one row per EVSE and message, replaced by the next one):
-- its charging needs, how the gateway answered them and why, and the schedule the car says
-- it will follow (NotifyEVChargingSchedule). Shown in the plan view; the target made from the
-- needs is in charging_targets.
CREATE TABLE ocpp201_ev_charging_needs (
  charge_point_id      TEXT    NOT NULL,
  evse_id              INTEGER NOT NULL,
  received_at_ms       INTEGER NOT NULL,
  -- The request as the station sent it (schema-checked), for the plan view and support.
  needs_json           TEXT    NOT NULL,
  -- NotifyEVChargingNeedsResponse: Accepted, Rejected or Processing, with statusInfo.
  status               TEXT    NOT NULL CHECK (status IN ('Accepted', 'Rejected', 'Processing')),
  reason_code          TEXT,
  additional_info      TEXT,
  -- What became of them: target (the connector's target is the car's), client-target (a
  -- client's target in force was kept), none (not planned: see the reason).
  outcome              TEXT    NOT NULL CHECK (outcome IN ('target', 'client-target', 'none')),
  PRIMARY KEY (charge_point_id, evse_id)
) WITHOUT ROWID;

CREATE TABLE ocpp201_ev_charging_schedules (
  charge_point_id      TEXT    NOT NULL,
  evse_id              INTEGER NOT NULL,
  received_at_ms       INTEGER NOT NULL,
  time_base_ms         INTEGER NOT NULL,
  -- chargingSchedule as the station sent it (its periods relative to time_base_ms).
  schedule_json        TEXT    NOT NULL,
  PRIMARY KEY (charge_point_id, evse_id)
) WITHOUT ROWID;
