// GET /api/v1/chargers/:charge_point_id/transactions/:transaction_id: one charger
// transaction and, once stopped, what it came to (recorded with its StopTransaction,
// ocpp/session-outcomes.ts): the actual cost by the CDR's rule, the cost of charging the
// same energy immediately from plug-in, and the plan it ran under. The CDR itself stays as
// the contract has it (no extra fields); this is the gateway's own view beside it.
import type { Router } from 'express';
import { SessionOutcomeRecorder } from '../../ocpp/session-outcomes.js';
import { chargerSessionId, cdrPath } from '../../ocpp/charger-session-id.js';
import { OcppStore } from '../../store/ocpp.js';
import { SignedValueStore } from '../../store/signed-values.js';
import { verificationOf } from '../../signed-meter/carried.js';
import { carriesSignedData, transactionSignedData } from '../../signed-meter/transaction-signed-data.js';
import type { SessionOutcome } from '../../store/session-outcomes.js';
import type { RouteDeps } from '../deps.js';
import { requireToken } from '../auth.js';
import { HttpProblem, methodNotAllowed } from '../errors.js';
import { formatUtc } from '../timestamps.js';

export const CHARGER_TRANSACTION_PATH = '/api/v1/chargers/:charge_point_id/transactions/:transaction_id';

/** OCPP 1.6 charge point identity as configured (as the plan endpoint takes it). */
const CHARGE_POINT_ID = /^[A-Za-z0-9*_=+.|@-]{1,48}$/;

const round = (v: number, digits: number) => Math.round(v * 10 ** digits) / 10 ** digits;

function outcomeView(o: SessionOutcome): Record<string, unknown> {
  const priced = o.actualCost !== null && o.immediateCost !== null;
  return {
    recorded_at: formatUtc(o.recordedAtMs),
    priced_at: o.pricedAtMs === null ? null : formatUtc(o.pricedAtMs),
    currency: o.currency,
    energy_wh: o.energyWh === null ? null : round(o.energyWh, 1),
    actual_cost: o.actualCost,
    immediate_cost: o.immediateCost,
    saving: priced ? round(o.immediateCost! - o.actualCost!, 4) : null,
    immediate: {
      max_power_w: round(o.immediateMaxPowerW, 1),
      power_source: o.immediatePowerSource,
      end_date_time: o.immediateEndMs === null ? null : formatUtc(o.immediateEndMs),
    },
    unpriced_reason: o.unpricedReason,
    planned: o.planned,
    plan: o.planned
      ? { planned_at: formatUtc(o.planPlannedAtMs!), energy_needed_wh: round(o.planEnergyNeededWh!, 1), expected_cost: round(o.planExpectedCost!, 4), immediate_cost: round(o.planImmediateCost!, 4) }
      : null,
  };
}

export function registerChargerTransactionRoutes(router: Router, deps: RouteDeps): void {
  const auth = requireToken(deps, { scheme: 'Token', type: 'cpo' });
  const transactions = new OcppStore(deps.db);
  const outcomes = new SessionOutcomeRecorder(deps.db, deps.config);
  const signedValues = new SignedValueStore(deps.db);

  router.get(CHARGER_TRANSACTION_PATH, auth, (req, res) => {
    const chargePointId = String(req.params.charge_point_id);
    const raw = String(req.params.transaction_id);
    const errors = [];
    if (!CHARGE_POINT_ID.test(chargePointId)) errors.push({ path: 'charge_point_id', message: 'must be 1 to 48 of A-Z a-z 0-9 * _ = + . | @ -' });
    if (!/^[1-9][0-9]{0,14}$/.test(raw)) errors.push({ path: 'transaction_id', message: 'must be a positive integer' });
    if (errors.length > 0) throw new HttpProblem(422, 'invalid charger or transaction id', { errors });
    const tx = transactions.transaction(Number(raw));
    if (!tx || tx.chargePointId !== chargePointId) throw new HttpProblem(404, `charger ${chargePointId} has no transaction ${raw}`);
    const session = chargerSessionId(tx.chargePointId, tx.transactionId);
    const outcome = tx.stoppedAtMs === null ? undefined : outcomes.get(tx, deps.clock.now());
    // The operator's view says what the signed meter values came to without being asked (the cdr only with include=signed_data).
    const signed = transactionSignedData(transactions, signedValues, deps.config.chargers, tx.transactionId);
    res.set('Cache-Control', 'no-store').json({
      charge_point_id: tx.chargePointId,
      connector_id: tx.connectorId,
      transaction_id: tx.transactionId,
      cpo_transaction_id: session,
      status: tx.stoppedAtMs === null ? 'active' : 'completed',
      start_date_time: formatUtc(tx.startedAtMs),
      end_date_time: tx.stoppedAtMs === null ? null : formatUtc(tx.stoppedAtMs),
      meter_start_wh: tx.meterStartWh,
      meter_stop_wh: tx.meterStopWh,
      // What the gateway found (docs/chargers.md): a stop it inferred, a clock it cannot trust, register values it left out.
      stopped_by: tx.stoppedAtMs === null ? null : tx.stopInferred === null ? 'charger' : 'gateway',
      stop_inferred_reason: tx.stopInferred,
      clock_problem: tx.clockProblem,
      register_values_dropped: tx.registerValuesDropped,
      outcome: outcome ? outcomeView(outcome) : null,
      signed_data_verification: signed && carriesSignedData(signed) ? verificationOf(signed.verification) : null,
      cdr: cdrPath(session),
    });
  });
  router.all(CHARGER_TRANSACTION_PATH, methodNotAllowed(['GET']));
}
