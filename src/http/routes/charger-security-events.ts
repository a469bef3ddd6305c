// GET /api/v1/chargers/:charge_point_id/security_events: the security events a charger
// reported (SecurityEventNotification; ocpp/security-events.ts), newest first, paged by id.
// The site operator's token (type cpo), as the charger's transactions.
import type { Router } from 'express';
import { SecurityEventStore, type SecurityEvent } from '../../store/security-events.js';
import { securityEventSeverity } from '../../ocpp/security-event-severity.js';
import type { RouteDeps } from '../deps.js';
import { requireToken } from '../auth.js';
import { HttpProblem, methodNotAllowed } from '../errors.js';
import { formatUtc } from '../timestamps.js';

export const CHARGER_SECURITY_EVENTS_PATH = '/api/v1/chargers/:charge_point_id/security_events';
const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1_000;

const view = (e: SecurityEvent) => ({
  id: e.id,
  type: e.type,
  severity: securityEventSeverity(e.ocppVersion, e.type),
  occurred_at: formatUtc(e.occurredAtMs),
  received_at: formatUtc(e.receivedAtMs),
  tech_info: e.techInfo,
  ocpp_version: e.ocppVersion,
});

/** A positive integer query parameter within [1, max], or the problem with it. */
function positive(raw: unknown, max: number): number | string {
  if (typeof raw !== 'string' || !/^[1-9][0-9]{0,15}$/.test(raw)) return `must be an integer from 1 to ${max}`;
  const n = Number(raw);
  return n <= max ? n : `must be an integer from 1 to ${max}`;
}

export function registerChargerSecurityEventRoutes(router: Router, deps: RouteDeps): void {
  const auth = requireToken(deps, { scheme: 'Token', type: 'cpo' });
  const store = new SecurityEventStore(deps.db);

  router.get(CHARGER_SECURITY_EVENTS_PATH, auth, (req, res) => {
    const chargePointId = String(req.params.charge_point_id);
    const errors: Array<{ path: string; message: string }> = [];
    let limit = DEFAULT_LIMIT;
    let beforeId: number | undefined;
    if (req.query.limit !== undefined) {
      const v = positive(req.query.limit, MAX_LIMIT);
      if (typeof v === 'string') errors.push({ path: 'limit', message: v });
      else limit = v;
    }
    if (req.query.before_id !== undefined) {
      const v = positive(req.query.before_id, Number.MAX_SAFE_INTEGER);
      if (typeof v === 'string') errors.push({ path: 'before_id', message: v });
      else beforeId = v;
    }
    if (errors.length > 0) throw new HttpProblem(422, 'invalid query', { errors });
    // A charger removed from the config keeps its events until retention: known by them.
    if (!deps.config.chargers.some((c) => c.id === chargePointId) && store.count(chargePointId) === 0) throw new HttpProblem(404, `no charger ${chargePointId} is configured`);
    const events = store.list(chargePointId, limit, beforeId);
    const more = events.length === limit && store.list(chargePointId, 1, events[events.length - 1].id).length > 0;
    res.set('Cache-Control', 'no-store').json({
      charge_point_id: chargePointId,
      security_events: events.map(view),
      next: more ? `/api/v1/chargers/${encodeURIComponent(chargePointId)}/security_events?limit=${limit}&before_id=${events[events.length - 1].id}` : null,
    });
  });
  router.all(CHARGER_SECURITY_EVENTS_PATH, methodNotAllowed(['GET']));
}
