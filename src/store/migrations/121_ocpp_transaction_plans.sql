-- A charger transaction that ran under a plan: the last plan its charger accepted as a
-- TxProfile, with what that plan expected to cost and what charging the same energy
-- immediately would have cost (issue 13 point 3), to compare with the session's price.
CREATE TABLE ocpp_transaction_plans (
  transaction_id    INTEGER PRIMARY KEY REFERENCES ocpp_transactions (transaction_id),
  planned_at_ms     INTEGER NOT NULL,
  energy_needed_wh  REAL    NOT NULL,
  planned_energy_wh REAL    NOT NULL,
  -- Day-ahead price only, excl. VAT, in the market's currency (as the plan's costs).
  expected_cost     REAL    NOT NULL,
  immediate_cost    REAL    NOT NULL
);
