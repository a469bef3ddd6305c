// A transaction's state as an OCPP 2.0.1 station holds it (Part 2 E09 GetTransactionStatus,
// E14), with a cpo token:
//   POST /api/v1/chargers/:charge_point_id/get-transaction-status   {transaction_id?}
// With a transaction (our integer id, as GET …/transactions and the cdrs name it) the station
// is sent its own string id for it and answers whether it is still ongoing and whether it
// holds events of it not yet delivered; without one, whether it holds any queued transaction
// events at all (messagesInQueue). A transaction that is not one of this station's: 409, nothing
// sent (the station could only answer ongoingIndicator false). A 1.6 charger has no such call:
// 409. Outcomes of the call as the operator operations' (answered() in charger-operations.ts).
import type { Router } from 'express';
import { Ocpp201TransactionStore } from '../../store/ocpp201-transactions.js';
import { requireToken } from '../auth.js';
import type { RouteDeps } from '../deps.js';
import { HttpProblem, methodNotAllowed } from '../errors.js';
import { fieldErrors, schemaValidator } from '../validate.js';
import { answered, configuredChargePointId, OPERATIONS_BASE, optionalJsonBody } from './charger-operations.js';

type Json = Record<string, unknown>;

export function registerStationTransactionStatusRoutes(router: Router, deps: RouteDeps): void {
  const auth = requireToken(deps, { scheme: 'Token', type: 'cpo' });
  const transactions = new Ocpp201TransactionStore(deps.db);
  const path = `${OPERATIONS_BASE}/get-transaction-status`;

  router.post(path, auth, ...optionalJsonBody(deps.config.http.body_limit_bytes), async (req, res) => {
    const chargePointId = String(req.params.charge_point_id);
    configuredChargePointId(deps, chargePointId);
    const validate = schemaValidator('GetTransactionStatusOperationRequest');
    const body = (req.body ?? {}) as Json;
    if (!validate(body)) throw new HttpProblem(422, 'the request body does not match the GetTransactionStatusOperationRequest schema', { errors: fieldErrors(validate) });
    const operations = deps.centralSystem?.()?.operations ?? null;
    if (operations?.ocppVersion(chargePointId) === '1.6') {
      throw new HttpProblem(409, `charger ${chargePointId} speaks OCPP 1.6, which has no GetTransactionStatus (GET /api/v1/chargers/${chargePointId}/transactions shows the transactions as the gateway has them); nothing was sent`);
    }
    let request: Json = {};
    if (body.transaction_id !== undefined) {
      const theirs = transactions.chargerTransaction(Number(body.transaction_id));
      if (!theirs || theirs.chargePointId !== chargePointId) {
        throw new HttpProblem(409, `transaction ${String(body.transaction_id)} is not a transaction of station ${chargePointId} (GET /api/v1/chargers/${chargePointId}/transactions lists them); nothing was sent`);
      }
      request = { transactionId: theirs.chargerTransactionId };
    }
    if (!operations) throw new HttpProblem(503, 'the OCPP central system is not running yet; try again', { headers: { 'Retry-After': '1' } });
    const answer = answered(await operations.call201(chargePointId, 'GetTransactionStatus', request), chargePointId, 'GetTransactionStatus');
    res.set('Cache-Control', 'no-store').json({ charge_point_id: chargePointId, action: 'GetTransactionStatus', request, answer, ...(body.transaction_id === undefined ? {} : { transaction_id: body.transaction_id }) });
  });
  router.all(path, methodNotAllowed(['POST']));
}
