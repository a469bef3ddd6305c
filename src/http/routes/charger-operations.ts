// POST /api/v1/chargers/:charge_point_id/<operation>: the operator's OCPP 1.6 operations on a
// connected charger (docs/chargers.md "Operator operations"), with a cpo token. Each body is
// validated against its schema in openapi.json, turned into the OCPP request, sent
// (ocpp/charger-operations.ts), and the charger's answer returned next to the request sent.
// `metergate charger ...` (cli/charger.ts) and the status page call these same routes.
//
// Error policy (problem+json): 404 charger not configured; 409 not connected (at once, never
// waits for it), or a fuse-protecting call to it in flight (not sent, Retry-After), or a
// remote start with the plan for a connector without one; 503 central
// system not running; 502 the charger's CallError (`ocpp_error` as it came) or an answer
// outside the schema of the OCPP version it speaks (named); 504 no answer
// within ocpp.operation_timeout_s; 422 a body or request outside the schema.
import type { Request, RequestHandler, Router } from 'express';
import express from 'express';
import type { ChargerOperationsPort, OperationOutcome, OperatorAction } from '../../ocpp/charger-operations.js';
import { chargingProfileIdOf, chargingProfileRequest, chargingRateUnitFor, profileWindow } from '../../ocpp/charging-profile.js';
import { RATE_UNIT_KEY, storedCapabilities } from '../../ocpp/charger-configuration.js';
import { chargerRefusalsInForce, refusalRetryMs } from '../../ocpp/refusals-in-force.js';
import { compareSchedules, type ScheduleLike } from '../../ocpp/composite-schedule.js';
import type { LocalListUpdateType } from '../../ocpp/local-auth-list.js';
import { authorizeIdTag } from '../../ocpp/id-tags.js';
import type { ChargerReservations } from '../../ocpp/reservations.js';
import { operationForm201 } from '../../ocpp/v201/operation-forms.js';
import type { ReservationRecord } from '../../store/ocpp-reservations.js';
import { ReservationStore } from '../../store/ocpp-reservations.js';
import type { RouteDeps } from '../deps.js';
import { requireToken } from '../auth.js';
import { HttpProblem, methodNotAllowed, requireJsonBody } from '../errors.js';
import { formatUtc } from '../timestamps.js';
import { fieldErrors, schemaValidator } from '../validate.js';

const CHARGE_POINT_ID = /^[A-Za-z0-9*_=+.|@-]{1,48}$/;
export const OPERATIONS_BASE = '/api/v1/chargers/:charge_point_id';

/** The path's charge point id when it is well formed (422) and a configured charger's (404). */
export function configuredChargePointId(deps: Pick<RouteDeps, 'config'>, chargePointId: string): string {
  if (!CHARGE_POINT_ID.test(chargePointId)) throw new HttpProblem(422, 'invalid charge point id', { errors: [{ path: 'charge_point_id', message: 'must be 1 to 48 of A-Z a-z 0-9 * _ = + . | @ -' }] });
  if (!deps.config.chargers.some((c) => c.id === chargePointId)) throw new HttpProblem(404, `no charger ${chargePointId} is configured`);
  return chargePointId;
}
/**
 * Retry-After of the 409 while a fuse-protecting call is in flight: such a call is answered
 * in well under a second by a charger that answers at all, and bounded by half of
 * site.lower_deadline_s (profile-dispatcher.ts) when it does not.
 */
const FUSE_CALL_RETRY_AFTER_S = 3;

type Body = Record<string, unknown>;
type Json = Record<string, unknown>;

interface OperationContext {
  readonly deps: RouteDeps;
  readonly chargePointId: string;
  /** What the gateway changed in the request, for the answer's `note`. */
  readonly notes: string[];
}

interface Operation {
  /** Last path segment, e.g. remote-start. */
  readonly path: string;
  readonly action: OperatorAction;
  /** components.schemas name of the body. */
  readonly schema: string;
  /** The OCPP request from the validated body. */
  readonly request: (body: Body, c: OperationContext) => Json;
  /**
   * Fields of the body only OCPP 2.0.1 has a place for (its form reads them: FormContext.only201),
   * with the reason a 1.6 charger cannot take them; undefined when the body has none.
   */
  readonly only201?: (body: Body) => { readonly fields: Json; readonly path: string; readonly why16: string } | undefined;
  /** What the answer carries besides the request and the charger's answer. */
  readonly extra?: (request: Json, answer: Json, c: OperationContext) => Json;
  /** What the gateway does once the charger answered; its fields join the response. */
  readonly after?: (answer: Json, c: OperationContext) => Json;
}

const optional = (name: string, value: unknown): Json => (value === undefined ? {} : { [name]: value });

/** A TxProfile of the connector's current plan, for RemoteStartTransaction (OCPP 1.6 5.11: purpose TxProfile, no transactionId). */
function planProfile(c: OperationContext, connectorId: number | undefined): Json {
  const { deps, chargePointId } = c;
  if (connectorId === undefined) throw new HttpProblem(422, 'a charging profile from the plan needs the connector', { errors: [{ path: 'connector_id', message: 'is required with charging_profile "plan"' }] });
  refuseRefusedProfiles(c, connectorId);
  const target = deps.charging.stores.targets.get(chargePointId, connectorId);
  const nowMs = deps.clock.now();
  if (!target || target.departureMs <= nowMs) throw new HttpProblem(409, `connector ${connectorId} of ${chargePointId} has no charging target in force; PUT /api/v1/chargers/${chargePointId}/connectors/${connectorId}/plan first`);
  const plan = deps.charging.planner.plan(target, nowMs);
  const rateUnit = chargingRateUnitFor(deps.charging.stores.configuration.get(chargePointId, RATE_UNIT_KEY)?.value);
  const whole = chargingProfileRequest(plan, { connectorId, transactionId: null, plannedAtMs: nowMs, departureMs: target.departureMs, rateUnit, purpose: 'TxProfile' });
  // A charger takes at most ChargingScheduleMaxPeriods periods (as read after its boot): a
  // longer plan starts with the periods from now it takes, the last one holding to the end
  // (never more than the plan); after its StartTransaction the plan follows by the strategy
  // in force (by period, re-sent at each boundary). The stack level is 0, which every
  // ChargeProfileMaxStackLevel allows.
  const maxPeriods = storedCapabilities(deps.charging.stores.configuration, chargePointId).maxPeriods;
  const periods = whole.csChargingProfiles.chargingSchedule.chargingSchedulePeriod.length;
  const { csChargingProfiles: p } = maxPeriods !== null && maxPeriods >= 1 && periods > maxPeriods ? profileWindow(whole, nowMs, maxPeriods).request : whole;
  if (p !== whole.csChargingProfiles) c.notes.push(`the plan has ${periods} periods, charger ${chargePointId} takes ${maxPeriods} (ChargingScheduleMaxPeriods): the profile carries the first ${maxPeriods} from now, the last holding to the end; after StartTransaction the plan follows period by period`);
  // RemoteStartTransaction's profile names no transaction (OCPP 1.6 5.11): made with transactionId null, it has none.
  return { ...p, chargingProfileId: chargingProfileIdOf(connectorId, 'TxProfile'), chargingProfilePurpose: 'TxProfile' };
}

/**
 * A start with the plan carries a TxProfile: not to a charger that does not declare
 * SmartCharging or refused a TxProfile (or every profile) within the refusal's back-off window
 * (ocpp/charging-strategy.ts refusalsInForce), so that a car is never held with a profile its charger
 * refused. Such a charger is started without one; its plan reaches it by the strategy in force.
 */
function refuseRefusedProfiles(c: OperationContext, connectorId: number): void {
  const { strategies, configuration } = c.deps.charging.stores;
  const id = c.chargePointId;
  const inForce = strategies.get(id, connectorId);
  const instead = `start it without charging_profile${inForce ? ` (its plan reaches it as ${inForce.strategy}: ${inForce.reason})` : ''}`;
  const features = storedCapabilities(configuration, id).supportedFeatureProfiles;
  if (features !== null && !features.some((f) => f.toLowerCase() === 'smartcharging')) {
    throw new HttpProblem(409, `charger ${id} does not declare SmartCharging (SupportedFeatureProfiles: ${features.join(',') || 'none'}): a start with the plan would carry a profile it cannot take; ${instead}`);
  }
  const refused = chargerRefusalsInForce(strategies, id, c.deps.clock.now(), refusalRetryMs(c.deps.config)).find((r) => r.strategy === 'tx-profile' || r.strategy === 'all-profiles');
  if (refused) {
    throw new HttpProblem(409, `charger ${id} refused ${refused.strategy === 'all-profiles' ? 'charging profiles' : 'a TxProfile'} before (${refused.answer} at ${formatUtc(refused.atMs)}): a start with the plan would carry one; ${instead}`);
  }
}

/** The schedule the gateway last sent for the connector's plan, and how the composite schedule compares with it. */
function compositeExtra(request: Json, answer: Json, c: OperationContext): Json {
  const sent = c.deps.charging.stores.profiles.get(c.chargePointId, Number(request.connectorId));
  if (!sent) return { plan: null, comparison: { comparable: false, reason: 'the gateway has sent no charging profile for this connector' } };
  const planned = (JSON.parse(sent.requestJson) as { csChargingProfiles: { chargingSchedule: ScheduleLike } }).csChargingProfiles.chargingSchedule;
  const plan = { purpose: sent.purpose, transaction_id: sent.transactionId, planned_at: formatUtc(sent.plannedAtMs), sent_at: formatUtc(sent.sentAtMs), status: sent.status, charging_schedule: planned };
  const composite = answer.chargingSchedule as ScheduleLike | undefined;
  const startMs = typeof answer.scheduleStart === 'string' ? Date.parse(answer.scheduleStart) : NaN;
  if (answer.status !== 'Accepted' || !composite) return { plan, comparison: { comparable: false, reason: 'the charger gave no composite schedule' } };
  const cmp = compareSchedules(composite, startMs, planned);
  const comparison = cmp.comparable
    ? { comparable: true, equal: cmp.equal, from: formatUtc(cmp.fromMs), to: formatUtc(cmp.toMs), differences: cmp.differences.map((d) => ({ at: formatUtc(d.atMs), composite_limit: d.compositeLimit, planned_limit: d.plannedLimit })) }
    : { comparable: false, reason: cmp.reason };
  return { plan, comparison };
}

const OPERATIONS: readonly Operation[] = [
  {
    path: 'remote-start',
    action: 'RemoteStartTransaction',
    schema: 'RemoteStartRequest',
    request: (b, c) => ({
      idTag: b.id_tag,
      ...optional('connectorId', b.connector_id),
      ...(b.charging_profile === 'plan' ? { chargingProfile: planProfile(c, b.connector_id as number | undefined) } : {}),
    }),
  },
  { path: 'remote-stop', action: 'RemoteStopTransaction', schema: 'RemoteStopRequest', request: (b) => ({ transactionId: b.transaction_id }) },
  {
    path: 'reset',
    action: 'Reset',
    schema: 'ResetRequest',
    request: (b) => ({ type: b.type }),
    // 1.6 resets the whole charge point; a 2.0.1 station can reset one EVSE (B11/B12).
    only201: (b) => (b.evse_id === undefined ? undefined : { fields: { evseId: b.evse_id }, path: 'evse_id', why16: 'an OCPP 1.6 Reset resets the whole charge point (only a 2.0.1 station resets one EVSE)' }),
  },
  { path: 'unlock-connector', action: 'UnlockConnector', schema: 'UnlockConnectorRequest', request: (b) => ({ connectorId: b.connector_id }) },
  { path: 'change-availability', action: 'ChangeAvailability', schema: 'ChangeAvailabilityRequest', request: (b) => ({ connectorId: b.connector_id ?? 0, type: b.type }) },
  { path: 'trigger-message', action: 'TriggerMessage', schema: 'TriggerMessageRequest', request: (b) => ({ requestedMessage: b.requested_message, ...optional('connectorId', b.connector_id) }) },
  { path: 'change-configuration', action: 'ChangeConfiguration', schema: 'ChangeConfigurationRequest', request: (b) => ({ key: b.key, value: b.value }) },
  { path: 'get-configuration', action: 'GetConfiguration', schema: 'GetConfigurationRequest', request: (b) => optional('key', b.keys) },
  { path: 'clear-cache', action: 'ClearCache', schema: 'EmptyOperationRequest', request: () => ({}) },
  {
    path: 'get-composite-schedule',
    action: 'GetCompositeSchedule',
    schema: 'GetCompositeScheduleRequest',
    request: (b) => ({ connectorId: b.connector_id, duration: b.duration_s, ...optional('chargingRateUnit', b.charging_rate_unit) }),
    extra: compositeExtra,
  },
  {
    // OCPP 1.6 5.5: by id, or by any of connector, purpose and stack level; nothing: every profile.
    path: 'clear-charging-profile',
    action: 'ClearChargingProfile',
    schema: 'ClearChargingProfileOperationRequest',
    request: (b) => ({ ...optional('id', b.id), ...optional('connectorId', b.connector_id), ...optional('chargingProfilePurpose', b.charging_profile_purpose), ...optional('stackLevel', b.stack_level) }),
    // A clear may remove the gateway's own profiles, and with them the site's ceiling: the
    // plans go out again at once (ocpp-rpc sends them after the clear), so the ceiling holds.
    after: (answer, c) => {
      if ((answer as { status?: unknown }).status === 'Accepted') c.deps.centralSystem?.()?.reapplyPlans(c.chargePointId);
      return { plans_sent_again: (answer as { status?: unknown }).status === 'Accepted' };
    },
  },
  {
    path: 'data-transfer',
    action: 'DataTransfer',
    schema: 'DataTransferRequest',
    // 1.6's data is a string; 2.0.1's any JSON: other data goes to a 2.0.1 station's form only.
    request: (b) => ({ vendorId: b.vendor_id, ...optional('messageId', b.message_id), ...(typeof b.data === 'string' ? { data: b.data } : {}) }),
    only201: (b) => (b.data === undefined || typeof b.data === 'string' ? undefined : { fields: { data: b.data }, path: 'data', why16: 'OCPP 1.6 DataTransfer data is a string (2.0.1 takes any JSON)' }),
  },
  {
    path: 'get-local-list-version',
    action: 'GetLocalListVersion',
    schema: 'EmptyOperationRequest',
    request: () => ({}),
    extra: (_r, _a, c) => ({ list_version_held: c.deps.centralSystem?.()?.localLists?.heldVersion(c.chargePointId) ?? null }),
  },
];

/** A JSON body when one came; none (no Content-Length, no Transfer-Encoding) is `{}`. */
export function optionalJsonBody(limitBytes: number): RequestHandler[] {
  const parse = express.json({ limit: limitBytes, strict: true, type: ['application/json', 'application/*+json'] });
  const hasBody = (req: Request) => req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
  return [
    (req, res, next) => (hasBody(req) ? requireJsonBody(req, res, next) : next()),
    (req, res, next) => {
      if (hasBody(req)) return parse(req, res, next);
      req.body = {};
      next();
    },
  ];
}

/** Why an operation is refused for a charger speaking OCPP 2.0.1 (HTTP 409): said, never a silent no-op. */
export function notIn201(chargePointId: string, what: string): string {
  return `charger ${chargePointId} speaks OCPP 2.0.1, and ${what} is done for OCPP 1.6 chargers only so far (docs/chargers.md "OCPP 2.0.1": its use-case table says what is left); nothing was sent`;
}

/** The outcome as the answer, or the problem that says why there is none. */
export function answered(outcome: OperationOutcome, chargePointId: string, action: string): Json {
  switch (outcome.kind) {
    case 'answered':
      return outcome.answer;
    case 'call-error':
      throw new HttpProblem(502, `charger ${chargePointId} answered ${action} with the CallError ${outcome.code}${outcome.description ? `: ${outcome.description.slice(0, 200)}` : ''}`, {
        ocppError: { code: outcome.code, description: outcome.description, details: outcome.details },
      });
    case 'invalid-answer':
      // Named in the version the charger speaks, with the call it was sent (a 2.0.1 form's call may be another: GetConfiguration goes as GetVariables).
      throw new HttpProblem(502, `charger ${chargePointId} answered ${outcome.action} with something that is not an OCPP ${outcome.ocppVersion} ${outcome.action} answer: ${outcome.message.slice(0, 200)}`);
    case 'unknown-charger':
      throw new HttpProblem(404, `no charger ${chargePointId} is configured`);
    case 'not-connected':
      throw new HttpProblem(409, `charger ${chargePointId} is not connected${outcome.lastMessageAtMs === null ? '' : ` (last message ${formatUtc(outcome.lastMessageAtMs)})`}; nothing was sent`);
    case 'timeout':
      throw new HttpProblem(504, `charger ${chargePointId} did not answer ${action} within ${outcome.timeoutMs / 1000} s (ocpp.operation_timeout_s); it may still act on it`);
    case 'invalid-request':
      throw new HttpProblem(422, `the ${action} request does not match the OCPP 1.6 schema: ${outcome.message}`, { errors: [{ path: '(body)', message: outcome.message }] });
    case 'failed':
      throw new HttpProblem(502, `the ${action} exchange with charger ${chargePointId} broke off: ${outcome.message}`);
    case 'fuse-call-in-flight':
      // Not sent: the call protecting the site fuse goes first (docs/chargers.md "Safety first on the wire").
      throw new HttpProblem(409, `a fuse-protecting call to charger ${chargePointId} is in flight (${outcome.action}); ${action} was not sent: try again in a few seconds`, { headers: { 'Retry-After': String(FUSE_CALL_RETRY_AFTER_S) } });
    case 'not-in-protocol':
      throw new HttpProblem(409, outcome.reason ? `charger ${chargePointId} speaks OCPP 2.0.1: ${outcome.reason}; nothing was sent` : notIn201(chargePointId, action));
  }
}

export function registerChargerOperationRoutes(router: Router, deps: RouteDeps): void {
  const auth = requireToken(deps, { scheme: 'Token', type: 'cpo' });
  const body = optionalJsonBody(deps.config.http.body_limit_bytes);

  /** The charger's id and the running central system, or the problem. */
  const target = (req: Request, action: OperatorAction) => {
    const chargePointId = String(req.params.charge_point_id);
    configuredChargePointId(deps, chargePointId);
    const cs = deps.centralSystem?.();
    if (!cs?.operations || !cs.localLists || !cs.reservations) throw new HttpProblem(503, 'the OCPP central system is not running yet; try again', { headers: { 'Retry-After': '1' } });
    // An operation with no 2.0.1 form (ocpp/v201/operations/) is refused at once for a 2.0.1 charger, connected or not.
    if (cs.operations.ocppVersion(chargePointId) === '2.0.1' && !operationForm201(action)) throw new HttpProblem(409, notIn201(chargePointId, `${req.method} ${req.path.split('/').pop() ?? 'this operation'}`));
    return { chargePointId, operations: cs.operations, localLists: cs.localLists, reservations: cs.reservations };
  };
  const validated = (schema: string, value: unknown): Body => {
    const validate = schemaValidator(schema);
    if (!validate(value)) throw new HttpProblem(422, `the request body does not match the ${schema} schema`, { errors: fieldErrors(validate) });
    return value as Body;
  };

  for (const op of OPERATIONS) {
    const path = `${OPERATIONS_BASE}/${op.path}`;
    router.post(path, auth, ...body, async (req, res) => {
      const { chargePointId, operations } = target(req, op.action);
      const c: OperationContext = { deps, chargePointId, notes: [] };
      const b = validated(op.schema, req.body);
      const request = op.request(b, c);
      const only201 = op.only201?.(b);
      if (only201 && operations.ocppVersion(chargePointId) !== '2.0.1') {
        throw new HttpProblem(422, `${only201.why16}: charger ${chargePointId} speaks 1.6${operations.ocppVersion(chargePointId) === null ? ' or has not connected yet' : ''}; nothing was sent`, { errors: [{ path: only201.path, message: 'for OCPP 2.0.1 stations only' }] });
      }
      const answer = answered(await operations.call(chargePointId, op.action, request, only201 ? { only201: only201.fields } : {}), chargePointId, op.action);
      res.set('Cache-Control', 'no-store').json({ charge_point_id: chargePointId, action: op.action, request, answer, ...(c.notes.length > 0 ? { note: c.notes.join('; ') } : {}), ...op.extra?.(request, answer, c), ...op.after?.(answer, c) });
    });
    router.all(path, methodNotAllowed(['POST']));
  }

  // The local authorization list from the configured id tags (ocpp/local-list-sync.ts).
  const listPath = `${OPERATIONS_BASE}/send-local-list`;
  router.post(listPath, auth, ...body, async (req, res) => {
    const { chargePointId, localLists } = target(req, 'SendLocalList');
    const b = validated('SendLocalListOperationRequest', req.body);
    const result = await localLists.sync(chargePointId, (b.update_type as LocalListUpdateType | undefined) ?? 'auto');
    if (result.kind === 'no-list') throw new HttpProblem(409, `charger ${chargePointId} accepts every id tag (auth: accept_all): it has no local authorization list to send`);
    const base = { charge_point_id: chargePointId, action: 'SendLocalList' };
    if (result.kind === 'in-step') {
      res.set('Cache-Control', 'no-store').json({ ...base, request: null, answer: null, note: `the charger holds version ${result.listVersion}, which has the configured id tags: nothing sent (update_type Full sends it again)`, list_version_held: result.listVersion });
      return;
    }
    const answer = answered(result.outcome, chargePointId, 'SendLocalList');
    res.set('Cache-Control', 'no-store').json({ ...base, request: result.request, answer, list_version_held: localLists.heldVersion(chargePointId) });
  });
  router.all(listPath, methodNotAllowed(['POST']));

  registerReservationRoutes(router, deps, { auth, body, target, validated });
}

/** A reservation as the API shows it. */
export function reservationView(r: ReservationRecord, nowMs: number): Json {
  const state = r.endedAtMs !== null ? 'ended' : r.expiryAtMs <= nowMs ? 'expired' : r.answerStatus === 'Accepted' ? 'active' : 'unconfirmed';
  return {
    reservation_id: r.reservationId,
    connector_id: r.connectorId,
    id_tag: r.idTag,
    parent_id_tag: r.parentIdTag,
    expiry_date: formatUtc(r.expiryAtMs),
    requested_at: formatUtc(r.requestedAtMs),
    state,
    charger_status: r.answerStatus,
    ended_at: r.endedAtMs === null ? null : formatUtc(r.endedAtMs),
    end_reason: r.endReason,
    transaction_id: r.transactionId,
  };
}

interface RouteParts {
  readonly auth: RequestHandler;
  readonly body: RequestHandler[];
  readonly target: (req: Request, action: OperatorAction) => { chargePointId: string; operations: ChargerOperationsPort; reservations: ChargerReservations };
  readonly validated: (schema: string, value: unknown) => Body;
}

/**
 * Reservations (ocpp/reservations.ts, docs/chargers.md "Reservations"): POST reserve-now
 * and cancel-reservation (the charger's answer and the reservation as kept), GET
 * reservations (those in force, read from the store: also while the charger is away).
 * Refused before anything is sent: an expiry not in the future or an id tag the charger's
 * auth would not accept (422), a charger that does not declare the Reservation profile
 * (409), a store that refuses writes (503). Connector 0 on a charger without
 * ReserveConnectorZeroSupported is the charger's to refuse (Rejected).
 */
function registerReservationRoutes(router: Router, deps: RouteDeps, p: RouteParts): void {
  const reservePath = `${OPERATIONS_BASE}/reserve-now`;
  router.post(reservePath, p.auth, ...p.body, async (req, res) => {
    const { chargePointId, operations, reservations } = p.target(req, 'ReserveNow');
    const b = p.validated('ReserveNowOperationRequest', req.body);
    const connectorType = b.connector_type === undefined ? undefined : String(b.connector_type);
    if (connectorType !== undefined && operations.ocppVersion(chargePointId) !== '2.0.1') {
      throw new HttpProblem(422, `connector_type is OCPP 2.0.1's (ReserveNow connectorType): charger ${chargePointId} speaks 1.6${operations.ocppVersion(chargePointId) === null ? ' or has not connected yet' : ''}, whose ReserveNow names a connector only; nothing was sent`, { errors: [{ path: 'connector_type', message: 'for OCPP 2.0.1 stations only' }] });
    }
    const nowMs = deps.clock.now();
    const expiryAtMs = Date.parse(String(b.expiry_date));
    if (!(expiryAtMs > nowMs)) throw new HttpProblem(422, 'the reservation must end in the future', { errors: [{ path: 'expiry_date', message: `must be after now (${formatUtc(nowMs)})` }] });
    // The id tags in force (they follow the config file on SIGHUP), not the ones at start.
    const charger = operations.charger(chargePointId)!;
    const idTag = String(b.id_tag);
    const parentIdTag = b.parent_id_tag === undefined ? null : String(b.parent_id_tag);
    // The id tag alone: the charger authorizes the tag presented, not its parent.
    if (authorizeIdTag(charger.auth, idTag) !== 'Accepted') {
      throw new HttpProblem(422, `id tag ${idTag} is not among charger ${chargePointId}'s id tags: it could not start a transaction on the reservation`, { errors: [{ path: 'id_tag', message: 'is not accepted by the charger\'s auth.id_tags' }] });
    }
    const connectorId = Number(b.connector_id);
    const { configuration } = deps.charging.stores;
    const features = storedCapabilities(configuration, chargePointId).supportedFeatureProfiles;
    if (features !== null && !features.some((f) => f.toLowerCase() === 'reservation')) {
      throw new HttpProblem(409, `charger ${chargePointId} does not declare the Reservation profile (SupportedFeatureProfiles: ${features.join(',') || 'none'}); nothing was sent`);
    }
    const result = await reservations.reserve(chargePointId, { connectorId, idTag, parentIdTag, expiryAtMs, ...(connectorType === undefined ? {} : { connectorType }) });
    if (!result) throw new HttpProblem(503, 'the store refuses writes (disk full, I/O error): no reservation id can be kept; nothing was sent', { headers: { 'Retry-After': '10' } });
    const answer = answered(result.outcome, chargePointId, 'ReserveNow');
    res.set('Cache-Control', 'no-store').json({ charge_point_id: chargePointId, action: 'ReserveNow', request: result.request, answer, reservation: reservationView(result.reservation, deps.clock.now()) });
  });
  router.all(reservePath, methodNotAllowed(['POST']));

  const cancelPath = `${OPERATIONS_BASE}/cancel-reservation`;
  router.post(cancelPath, p.auth, ...p.body, async (req, res) => {
    const { chargePointId, reservations } = p.target(req, 'CancelReservation');
    const b = p.validated('CancelReservationOperationRequest', req.body);
    const result = await reservations.cancel(chargePointId, Number(b.reservation_id));
    if (result.kind === 'unknown') throw new HttpProblem(404, `charger ${chargePointId} has no open reservation ${String(b.reservation_id)} (GET …/reservations lists those in force)`);
    const answer = answered(result.outcome, chargePointId, 'CancelReservation');
    res.set('Cache-Control', 'no-store').json({ charge_point_id: chargePointId, action: 'CancelReservation', request: result.request, answer, reservation: reservationView(result.reservation, deps.clock.now()) });
  });
  router.all(cancelPath, methodNotAllowed(['POST']));

  // Read from the store: the reservations in force also while the charger or the central system is away.
  const listPath = `${OPERATIONS_BASE}/reservations`;
  const store = new ReservationStore(deps.db);
  router.get(listPath, p.auth, (req, res) => {
    const chargePointId = String(req.params.charge_point_id);
    configuredChargePointId(deps, chargePointId);
    const nowMs = deps.clock.now();
    const inForce = store.open(chargePointId).filter((r) => r.expiryAtMs > nowMs);
    res.set('Cache-Control', 'no-store').json({ charge_point_id: chargePointId, reservations: inForce.map((r) => reservationView(r, nowMs)) });
  });
  router.all(listPath, methodNotAllowed(['GET']));
}
