// PUT /api/v1/sessions/:cpo_transaction_id: session ingest from a charge-point operator.
import type { Router } from 'express';
import { CHARGER_SESSION_PREFIX, isChargerSessionId, cdrPath } from '../../ocpp/charger-session-id.js';
import type { SessionRecord, SessionStatus } from '../../store/sessions.js';
import type { RouteDeps } from '../deps.js';
import { requireToken } from '../auth.js';
import { jsonBody } from '../body.js';
import { HttpProblem, methodNotAllowed, type FieldError } from '../errors.js';
import { ProblemList } from '../problem-list.js';
import { assertReadingCap, collectMeterReadings } from '../readings-input.js';
import { collectMarket, ownReadingsWindowRefusal, readingsUsableErrors, type RequestPowerMarket } from '../session-pricing.js';
import { formatUtc, parseTimestamp, subMillisecondNs } from '../timestamps.js';
import { fieldErrors, shellValidator } from '../validate.js';

interface SessionRequest {
  power_market: RequestPowerMarket;
  status: SessionStatus;
  start_date_time: string;
  end_date_time?: string;
  meter_readings?: unknown[];
  resource_id?: string;
}

/** Ids are what the operator uses; anything printable up to 255 characters except the reserved word. */
const ID_PATTERN = /^[^\u0000-\u001f\u007f]{1,255}$/;

/** What is wrong with a cpo_transaction_id of the path, or undefined. */
function cpoTransactionIdError(id: string): string | undefined {
  if (id === 'meter_readings') return 'is reserved (it names the meter_readings endpoint)';
  if (isChargerSessionId(id)) return `ids starting "${CHARGER_SESSION_PREFIX}" are the gateway's charger sessions (docs/chargers.md); an operator's session cannot take one`;
  if (!ID_PATTERN.test(id)) return 'must be 1 to 255 characters without control characters';
  return undefined;
}

export function sessionView(s: SessionRecord): Record<string, unknown> {
  return {
    cpo_transaction_id: s.cpoTransactionId,
    id: s.cdrId,
    status: s.status,
    market_area_code: s.marketArea,
    start_date_time: formatUtc(s.startMs, s.startSubMsNs),
    end_date_time: s.endMs === null ? null : formatUtc(s.endMs, s.endSubMsNs),
    resource_id: s.resourceId,
    readings: s.readingCount,
    last_updated: formatUtc(s.lastUpdatedMs),
    cdr: cdrPath(s.cpoTransactionId),
  };
}

export function registerSessionRoutes(router: Router, deps: RouteDeps): void {
  const validate = shellValidator('SessionRequest', 'meter_readings');
  const localMeters = new Map(deps.config.meters.map((m) => [m.resource_id.toLowerCase(), m.resource_id]));
  const { max_readings: maxReadings } = deps.config.http;

  router.put('/api/v1/sessions/:cpo_transaction_id', requireToken(deps, { scheme: 'Token', type: 'cpo' }), ...jsonBody(deps.config.http.body_limit_bytes), (req, res) => {
    const id = req.params.cpo_transaction_id as string;
    assertReadingCap(req.body, maxReadings);
    // Every independent mistake of the request is listed in ONE 422: the id, the schema,
    // then each check on the fields the schema let through (a field already named is not
    // checked again).
    const problems = new ProblemList();
    const idMessage = cpoTransactionIdError(id);
    if (idMessage) problems.add('invalid cpo_transaction_id', [{ path: 'cpo_transaction_id', message: idMessage }]);
    if (!validate(req.body)) problems.add('the request body does not match the SessionRequest schema', fieldErrors(validate));
    const usable = (path: string) => !problems.named(path);
    const input = (typeof req.body === 'object' && req.body !== null && !Array.isArray(req.body) ? req.body : {}) as Partial<SessionRequest>;

    const marketErrors: FieldError[] = [];
    const market = input.power_market && usable('power_market') ? collectMarket(deps.priceAccess, input.power_market, marketErrors) : undefined;
    problems.add('the power market is not one this gateway prices', marketErrors);

    const errors: FieldError[] = [];
    const startMs = typeof input.start_date_time === 'string' && usable('start_date_time') ? parseTimestamp(input.start_date_time) : undefined;
    if (typeof startMs === 'string') errors.push({ path: 'start_date_time', message: startMs });
    const endMs: number | string | null | undefined = input.end_date_time === undefined ? null : typeof input.end_date_time === 'string' && usable('end_date_time') ? parseTimestamp(input.end_date_time) : undefined;
    if (typeof endMs === 'string') errors.push({ path: 'end_date_time', message: endMs });
    if (input.status === 'completed' && endMs === null && usable('end_date_time')) errors.push({ path: 'end_date_time', message: 'is required when status is completed' });
    const startSubMsNs = typeof startMs === 'number' ? subMillisecondNs(input.start_date_time!) : 0;
    const endSubMsNs = typeof endMs === 'number' ? subMillisecondNs(input.end_date_time!) : 0;
    if (typeof startMs === 'number' && typeof endMs === 'number' && (endMs < startMs || (endMs === startMs && endSubMsNs <= startSubMsNs))) errors.push({ path: 'end_date_time', message: 'must be after start_date_time' });
    const hasReadings = input.meter_readings !== undefined;
    const hasResource = input.resource_id !== undefined;
    if (hasReadings === hasResource) {
      errors.push({ path: hasReadings ? 'resource_id' : 'meter_readings', message: 'send either meter_readings or resource_id (of a meter configured on this gateway), not both or neither' });
    }
    if (typeof input.resource_id === 'string' && usable('resource_id') && !localMeters.has(input.resource_id.toLowerCase())) {
      errors.push({ path: 'resource_id', message: `is not a meter configured on this gateway (${localMeters.size} configured)` });
    }
    const windowOk = errors.length === 0 && typeof startMs === 'number' && (typeof endMs === 'number' || endMs === null);
    problems.add('the session is not valid', errors);

    const readingErrors: FieldError[] = [];
    const readings = Array.isArray(input.meter_readings) && usable('meter_readings') ? collectMeterReadings(input.meter_readings, readingErrors) : null;
    problems.add('some meter readings are invalid', readingErrors);
    if (readings) {
      const unusable = readingsUsableErrors(readings, 'meter_readings', input.status === 'completed');
      problems.add('the meter readings cannot be priced', unusable);
      // Readings outside start..end are accepted and not billed; a completed session needs some that bill its window.
      if (unusable.length === 0 && input.status === 'completed' && windowOk && typeof startMs === 'number' && typeof endMs === 'number') {
        const outside = ownReadingsWindowRefusal(readings, startMs, endMs);
        if (outside) problems.add(outside.detail, [outside.error]);
      }
    }
    problems.throwIfAny('session');
    if (!market || !windowOk || typeof startMs !== 'number' || typeof endMs === 'string' || endMs === undefined) throw new Error('a session passed every check without a market or window');

    const existing = deps.sessions.get(id);
    if (existing?.status === 'completed' && input.status === 'active') {
      throw new HttpProblem(409, `session "${id.slice(0, 100)}" is completed and cannot go back to active`, { errors: [{ path: 'status', message: 'must stay completed' }] });
    }
    const { outcome, record } = deps.sessions.upsert(
      {
        cpoTransactionId: id,
        marketArea: market.code,
        status: input.status!,
        startMs,
        endMs,
        startSubMsNs,
        endSubMsNs,
        resourceId: hasResource ? localMeters.get(input.resource_id!.toLowerCase())! : null,
        readings,
      },
      deps.clock.now(),
    );
    if (outcome === 'created') res.status(201).location(cdrPath(id));
    res.set('Cache-Control', 'no-store').json(sessionView(record));
  });
  router.all('/api/v1/sessions/:cpo_transaction_id', methodNotAllowed(['PUT']));
}
