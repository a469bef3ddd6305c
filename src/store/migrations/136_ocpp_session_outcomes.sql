-- What a completed charger session came to, recorded with its StopTransaction (in the same
-- SQLite transaction): its actual cost (the CDR's pricing rule), the cost of charging the
-- same energy immediately from plug-in at the connector's maximum allowed power
-- (planning/session-outcome.ts), and whether it ran under a plan its charger accepted.
-- Costs are the day-ahead price only, excl. VAT, in the market's currency.
CREATE TABLE ocpp_session_outcomes (
  transaction_id        INTEGER PRIMARY KEY REFERENCES ocpp_transactions (transaction_id),
  recorded_at_ms        INTEGER NOT NULL,
  -- When the costs were computed: at the stop, or later when they could not be then.
  priced_at_ms          INTEGER,
  currency              TEXT,
  energy_wh             REAL,
  actual_cost           REAL,
  immediate_cost        REAL,
  -- The power charging immediately assumes, and where it came from (charging-target, default).
  immediate_max_power_w REAL    NOT NULL,
  immediate_power_source TEXT   NOT NULL,
  immediate_end_ms      INTEGER,
  -- Why the costs are not there (NULL once priced): prices or readings missing at the stop.
  unpriced_reason       TEXT,
  -- The plan the session ran under (ocpp_transaction_plans at the stop), or 0/NULL.
  planned               INTEGER NOT NULL,
  plan_planned_at_ms    INTEGER,
  plan_expected_cost    REAL,
  plan_immediate_cost   REAL,
  plan_energy_needed_wh REAL
);
