// PUT /api/v1/sessions/:cpo_transaction_id: session ingest from a charge-point operator.
import type { Router } from 'express';
import { CHARGER_SESSION_PREFIX, isChargerSessionId, cdrPath } from '../../ocpp/charger-session-id.js';
import type { SessionRecord, SessionStatus } from '../../store/sessions.js';
import type { RouteDeps } from '../deps.js';
import { requireToken } from '../auth.js';
import { jsonBody } from '../body.js';
import { HttpProblem, methodNotAllowed, type FieldError } from '../errors.js';
import { assertReadingCap, readMeterReadings } from '../readings-input.js';
import { assertReadingsUsable, ownReadingsInWindow, resolveMarket, type RequestPowerMarket } from '../session-pricing.js';
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
    if (!ID_PATTERN.test(id) || id === 'meter_readings' || isChargerSessionId(id)) {
      const message = id === 'meter_readings'
        ? 'is reserved (it names the meter_readings endpoint)'
        : isChargerSessionId(id)
          ? `ids starting "${CHARGER_SESSION_PREFIX}" are the gateway's charger sessions (docs/chargers.md); an operator's session cannot take one`
          : 'must be 1 to 255 characters without control characters';
      throw new HttpProblem(422, 'invalid cpo_transaction_id', { errors: [{ path: 'cpo_transaction_id', message }] });
    }
    assertReadingCap(req.body, maxReadings);
    if (!validate(req.body)) throw new HttpProblem(422, 'the request body does not match the SessionRequest schema', { errors: fieldErrors(validate) });
    const input = req.body as SessionRequest;
    const market = resolveMarket(deps.priceAccess, input.power_market);

    const errors: FieldError[] = [];
    const startMs = parseTimestamp(input.start_date_time);
    if (typeof startMs === 'string') errors.push({ path: 'start_date_time', message: startMs });
    let endMs: number | string | null = input.end_date_time === undefined ? null : parseTimestamp(input.end_date_time);
    if (typeof endMs === 'string') errors.push({ path: 'end_date_time', message: endMs });
    if (input.status === 'completed' && endMs === null) errors.push({ path: 'end_date_time', message: 'is required when status is completed' });
    const startSubMsNs = typeof startMs === 'number' ? subMillisecondNs(input.start_date_time) : 0;
    const endSubMsNs = typeof endMs === 'number' ? subMillisecondNs(input.end_date_time!) : 0;
    if (typeof startMs === 'number' && typeof endMs === 'number' && (endMs < startMs || (endMs === startMs && endSubMsNs <= startSubMsNs))) errors.push({ path: 'end_date_time', message: 'must be after start_date_time' });
    const hasReadings = input.meter_readings !== undefined;
    const hasResource = input.resource_id !== undefined;
    if (hasReadings === hasResource) {
      errors.push({ path: hasReadings ? 'resource_id' : 'meter_readings', message: 'send either meter_readings or resource_id (of a meter configured on this gateway), not both or neither' });
    }
    if (hasResource && !localMeters.has(input.resource_id!.toLowerCase())) {
      errors.push({ path: 'resource_id', message: `is not a meter configured on this gateway (${localMeters.size} configured)` });
    }
    if (errors.length > 0) throw new HttpProblem(422, 'the session is not valid', { errors });

    const readings = hasReadings ? readMeterReadings(input.meter_readings!) : null;
    if (readings) assertReadingsUsable(readings, 'meter_readings', input.status === 'completed');
    // Readings outside start..end are accepted and not billed; a completed session needs some that bill its window.
    if (readings && input.status === 'completed') ownReadingsInWindow(readings, startMs as number, endMs as number);

    const existing = deps.sessions.get(id);
    if (existing?.status === 'completed' && input.status === 'active') {
      throw new HttpProblem(409, `session "${id.slice(0, 100)}" is completed and cannot go back to active`, { errors: [{ path: 'status', message: 'must stay completed' }] });
    }
    const { outcome, record } = deps.sessions.upsert(
      {
        cpoTransactionId: id,
        marketArea: market.code,
        status: input.status,
        startMs: startMs as number,
        endMs: endMs as number | null,
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
