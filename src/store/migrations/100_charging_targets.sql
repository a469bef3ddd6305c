-- What a client asked a connector to charge (issue 13 point 3): the energy needed by the
-- departure time, with the limits the plan must keep. Kept across restarts, so the gateway
-- can plan again (new prices, a restart) without the client asking again.
CREATE TABLE charging_targets (
  charge_point_id   TEXT    NOT NULL,
  connector_id      INTEGER NOT NULL CHECK (connector_id >= 1),
  market_area       TEXT    NOT NULL,
  departure_ms      INTEGER NOT NULL,
  energy_wh         REAL    NOT NULL CHECK (energy_wh > 0),
  max_current_a     REAL    NOT NULL CHECK (max_current_a > 0),
  min_current_a     REAL    NOT NULL CHECK (min_current_a >= 0),
  phases            INTEGER NOT NULL CHECK (phases IN (1, 3)),
  voltage_v         REAL    NOT NULL CHECK (voltage_v > 0),
  -- Site connection limit per phase and the rest of the site's load per phase; NULL = none given.
  site_limit_a      REAL,
  site_other_load_a REAL,
  updated_at_ms     INTEGER NOT NULL,
  PRIMARY KEY (charge_point_id, connector_id)
) WITHOUT ROWID;
