-- Charger sessions get their own id space (issue 20 point 4): `ocpp:<chargePointId>:<transactionId>`
-- instead of `<chargePointId>-<transactionId>`, which a PUT /api/v1/sessions could also
-- send (a CPO session `CP1-1` was overwritten when CP1 started its transaction 1). A charge
-- point id has no ':' (config pattern), and PUT refuses ids starting `ocpp:`, so the two can
-- never meet again. Each session keeps its cdr id (sessions.cdr_id) and its readings; the
-- old id is kept in session_id_moves so GET /api/v1/cdrs/<old id> still prices it as long
-- as no operator session takes that id (docs/http-api.md).
PRAGMA defer_foreign_keys = ON;

CREATE TABLE session_id_moves (
  old_id TEXT PRIMARY KEY,
  new_id TEXT NOT NULL
) WITHOUT ROWID;

INSERT INTO session_id_moves (old_id, new_id)
SELECT s.cpo_transaction_id, 'ocpp:' || t.charge_point_id || ':' || t.transaction_id
FROM sessions s JOIN ocpp_transactions t ON s.cpo_transaction_id = t.charge_point_id || '-' || t.transaction_id;

UPDATE session_readings SET cpo_transaction_id = (SELECT m.new_id FROM session_id_moves m WHERE m.old_id = session_readings.cpo_transaction_id)
WHERE cpo_transaction_id IN (SELECT old_id FROM session_id_moves);

UPDATE sessions SET cpo_transaction_id = (SELECT m.new_id FROM session_id_moves m WHERE m.old_id = sessions.cpo_transaction_id)
WHERE cpo_transaction_id IN (SELECT old_id FROM session_id_moves);
