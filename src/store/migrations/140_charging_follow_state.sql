-- What following a connector's plan learnt and decided, kept across restarts (docs/planning.md
-- "Following the plan", "The site meter"): when the plan follower last planned the rest
-- again (its minimum interval), when the site's load last changed the plan and the highest
-- current per phase that plan allowed (the raise interval; a plan sent but not yet
-- answered), and the car's observed maximum draw in its transaction.
CREATE TABLE charging_follow_state (
  charge_point_id TEXT NOT NULL,
  connector_id INTEGER NOT NULL,
  replanned_at_ms INTEGER,
  site_changed_at_ms INTEGER,
  site_cap_a REAL,
  -- The transaction the observed draw was learnt in; a new transaction starts afresh.
  observed_transaction_id INTEGER,
  observed_max_current_a REAL,
  observed_phases INTEGER,
  observed_at_ms INTEGER,
  PRIMARY KEY (charge_point_id, connector_id)
);
