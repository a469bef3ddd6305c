-- Retention of sessions and charger data (store.sessions_retention_days, issue 20 point 9):
-- the purge finds what has ended through these instead of scanning the tables.
CREATE INDEX ocpp_transactions_stopped ON ocpp_transactions (stop_received_at_ms) WHERE stopped_at_ms IS NOT NULL;
CREATE INDEX sessions_completed_end ON sessions (end_ms) WHERE status = 'completed';
