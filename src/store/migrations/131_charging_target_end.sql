-- A target is for one charging session: when the transaction on its connector stops, the
-- target has ended (docs/chargers.md "Clearing profiles"): it is planned no more and its
-- profiles are cleared from the charger. A new PUT starts it again (NULL).
ALTER TABLE charging_targets ADD COLUMN ended_at_ms INTEGER;
