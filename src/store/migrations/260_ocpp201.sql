-- OCPP 2.0.1 chargers on the same central system (docs/chargers.md "OCPP 2.0.1", issue 33).
-- ocpp_version: the subprotocol of the charger's last connection ('1.6', '2.0.1'), so the
--   HTTP API can say a 2.0.1 charger's operation is not done yet while it is not connected.
ALTER TABLE ocpp_charge_points ADD COLUMN ocpp_version TEXT;

-- A 2.0.1 transaction id is the charging station's (a string of up to 36 characters, a UUID
-- mostly); 1.6's is ours (an integer). Each 2.0.1 transaction is one ocpp_transactions row
-- like a 1.6 one (so its session, cdr, planning and retention are the same), and this table
-- maps the station's id to that row's integer id. Its session is `ocpp:<cp>:<integer id>`.
-- last_seq_no: the highest TransactionEvent seqNo stored (events can come out of order
-- from the station's offline queue). meter_start_pending: its Started event had no energy
-- register value, so meter_start_wh is a placeholder until the first one arrives.
CREATE TABLE ocpp201_transactions (
  charge_point_id TEXT NOT NULL,
  charger_transaction_id TEXT NOT NULL,
  transaction_id INTEGER NOT NULL UNIQUE REFERENCES ocpp_transactions (transaction_id) ON DELETE CASCADE,
  evse_id INTEGER NOT NULL,
  last_seq_no INTEGER NOT NULL,
  meter_start_pending INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (charge_point_id, charger_transaction_id)
);
