// The charging profiles an OCPP 2.0.1 station holds (Part 2 K09), with a cpo token:
//   POST /api/v1/chargers/:charge_point_id/get-charging-profiles            asks (GetChargingProfiles)
//   GET  /api/v1/chargers/:charge_point_id/charging-profiles/:request_id    what it reported
// The station answers the ask (Accepted, NoProfiles) and then sends its profiles in
// ReportChargingProfiles messages (one per EVSE and source), stored as they come
// (ocpp/v201/smart-charging.ts) under the ask's request id. The criteria are K09.FR.03's: the
// profile ids, or at least one of purpose, stack level and limit source (422 otherwise); the
// EVSE is optional (0: the station's own). A 1.6 charger has no such call: 409. Outcomes of
// the ask as the operator operations' (answered() in charger-operations.ts).
import type { Router } from 'express';
import { Ocpp201ChargingLimitStore } from '../../store/ocpp201-charging-limits.js';
import { requireToken } from '../auth.js';
import type { RouteDeps } from '../deps.js';
import { HttpProblem, methodNotAllowed } from '../errors.js';
import { formatUtc } from '../timestamps.js';
import { fieldErrors, schemaValidator } from '../validate.js';
import { answered, configuredChargePointId, OPERATIONS_BASE, optionalJsonBody } from './charger-operations.js';

type Json = Record<string, unknown>;

/** The API's purpose names are 1.6's (as everywhere else in the API); 2.0.1 names the station-wide one otherwise. */
const PURPOSE_201: Record<string, string> = { TxProfile: 'TxProfile', TxDefaultProfile: 'TxDefaultProfile', ChargePointMaxProfile: 'ChargingStationMaxProfile', ChargingStationExternalConstraints: 'ChargingStationExternalConstraints' };

/** GetChargingProfiles' requestId: seconds since 2020 at start, counted up per ask (ids grow across restarts too). */
let lastRequestId = Math.floor((Date.now() - Date.UTC(2020, 0, 1)) / 1000);
const nextRequestId = () => (lastRequestId = lastRequestId >= 2_147_483_647 ? 1 : lastRequestId + 1);

/** The 2.0.1 request from the validated body; null when it names no criterion (K09.FR.03). Pure. */
export function getChargingProfilesRequest(body: Json, requestId: number): Json | null {
  const criterion: Json = {
    ...(body.charging_profile_purpose === undefined ? {} : { chargingProfilePurpose: PURPOSE_201[String(body.charging_profile_purpose)] }),
    ...(body.stack_level === undefined ? {} : { stackLevel: body.stack_level }),
    ...(body.charging_profile_ids === undefined ? {} : { chargingProfileId: body.charging_profile_ids }),
    ...(body.charging_limit_sources === undefined ? {} : { chargingLimitSource: body.charging_limit_sources }),
  };
  if (Object.keys(criterion).length === 0) return null;
  return { requestId, ...(body.evse_id === undefined ? {} : { evseId: body.evse_id }), chargingProfile: criterion };
}

export function registerStationChargingProfileRoutes(router: Router, deps: RouteDeps): void {
  const auth = requireToken(deps, { scheme: 'Token', type: 'cpo' });
  const store = new Ocpp201ChargingLimitStore(deps.db);

  const station = (chargePointId: string) => {
    configuredChargePointId(deps, chargePointId);
    const operations = deps.centralSystem?.()?.operations ?? null;
    if (operations?.ocppVersion(chargePointId) === '1.6') throw new HttpProblem(409, `charger ${chargePointId} speaks OCPP 1.6, which has no GetChargingProfiles (POST /api/v1/chargers/${chargePointId}/get-composite-schedule shows what limits it)`);
    return operations;
  };

  const askPath = `${OPERATIONS_BASE}/get-charging-profiles`;
  router.post(askPath, auth, ...optionalJsonBody(deps.config.http.body_limit_bytes), async (req, res) => {
    const chargePointId = String(req.params.charge_point_id);
    const validate = schemaValidator('GetChargingProfilesOperationRequest');
    const body = (req.body ?? {}) as Json;
    if (!validate(body)) throw new HttpProblem(422, 'the request body does not match the GetChargingProfilesOperationRequest schema', { errors: fieldErrors(validate) });
    const operations = station(chargePointId);
    const request = getChargingProfilesRequest(body, nextRequestId());
    if (request === null) throw new HttpProblem(422, 'name the profiles to report (OCPP 2.0.1 K09.FR.03): charging_profile_ids, or at least one of charging_profile_purpose, stack_level, charging_limit_sources', { errors: [{ path: '(body)', message: 'needs a criterion' }] });
    if (!operations) throw new HttpProblem(503, 'the OCPP central system is not running yet; try again', { headers: { 'Retry-After': '1' } });
    const answer = answered(await operations.call201(chargePointId, 'GetChargingProfiles', request), chargePointId, 'GetChargingProfiles');
    res.set('Cache-Control', 'no-store').json({ charge_point_id: chargePointId, action: 'GetChargingProfiles', request, answer, reports: `/api/v1/chargers/${chargePointId}/charging-profiles/${String(request.requestId)}` });
  });
  router.all(askPath, methodNotAllowed(['POST']));

  const reportPath = `${OPERATIONS_BASE}/charging-profiles/:request_id`;
  router.get(reportPath, auth, (req, res) => {
    const chargePointId = String(req.params.charge_point_id);
    const requestId = Number(req.params.request_id);
    if (!Number.isInteger(requestId) || requestId < 0 || requestId > 2_147_483_647) throw new HttpProblem(422, 'invalid request id', { errors: [{ path: 'request_id', message: 'must be an integer from 0 to 2147483647' }] });
    station(chargePointId);
    res.set('Cache-Control', 'no-store').json({
      charge_point_id: chargePointId,
      request_id: requestId,
      reports: store.reports(chargePointId, requestId).map((r) => ({ evse_id: r.evseId, charging_limit_source: r.source, received_at: formatUtc(r.receivedAtMs), charging_profiles: r.profiles })),
    });
  });
  router.all(reportPath, methodNotAllowed(['GET']));
}
