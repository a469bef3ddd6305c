-- What the gateway found about a charger transaction (issue 20 point 4), shown by
-- GET /api/v1/chargers/{cp}/transactions/{id}:
-- stop_inferred: the gateway closed it with its last register value because the charger
--   never stopped it ('new-transaction': a new StartTransaction on the connector; 'reboot':
--   the connector Available after a BootNotification); NULL for a charger's own stop.
-- stop_received_at_ms: when the stop (the charger's or the gateway's) was stored; late
--   MeterValues change the session only until sessions.late_meter_values_s after it.
-- clock_problem: why the charger's timestamps cannot be trusted for this transaction (its
--   clock was off by more than clock.step_tolerance_s); its cdr answers 422 with it.
-- register_values_dropped: register values left out of the session because they broke
--   monotonicity against meterStart/meterStop (kept in ocpp_meter_values as sent).
ALTER TABLE ocpp_transactions ADD COLUMN stop_inferred TEXT;
ALTER TABLE ocpp_transactions ADD COLUMN stop_received_at_ms INTEGER;
ALTER TABLE ocpp_transactions ADD COLUMN clock_problem TEXT;
ALTER TABLE ocpp_transactions ADD COLUMN register_values_dropped INTEGER NOT NULL DEFAULT 0;
UPDATE ocpp_transactions SET stop_received_at_ms = created_at_ms WHERE stopped_at_ms IS NOT NULL;
CREATE INDEX ocpp_transactions_open ON ocpp_transactions (charge_point_id, connector_id) WHERE stopped_at_ms IS NULL;
