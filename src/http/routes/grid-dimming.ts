// GET /api/v1/grid/dimming_events: the grid operator's dimming events (§14a EnWG) as stored
// by grid/grid-control.ts, for the grid operator (docs/grid-limits.md "What the grid operator
// sees"): JSON, or CSV with ?format=csv (one row per event and connector). The site operator's
// token (type cpo): the evidence is the operator's to hand on.
import type { Router } from 'express';
import { DimmingStore, type DimmingEvent } from '../../store/grid-dimming.js';
import type { RouteDeps } from '../deps.js';
import { requireToken } from '../auth.js';
import { HttpProblem, methodNotAllowed } from '../errors.js';
import { formatUtc, parseTimestamp } from '../timestamps.js';

export const GRID_DIMMING_PATH = '/api/v1/grid/dimming_events';
const MAX_EVENTS = 10_000;
const DAY_MS = 86_400_000;

const iso = (ms: number | null) => (ms === null ? null : formatUtc(ms));

function eventView(e: DimmingEvent) {
  return {
    id: e.id,
    started_at: formatUtc(e.startedAtMs),
    ended_at: iso(e.endedAtMs),
    limit_w: e.limitW,
    cause: e.cause,
    contacts: e.contacts,
    confirmed_at: iso(e.confirmedAtMs),
    late: e.late,
    connectors: e.connectors.map((c) => ({ charge_point_id: c.charge_point_id, connector_id: c.connector_id, share_a: c.share_a, in_force_a: c.in_force_a, confirmed_at: iso(c.confirmed_at_ms) })),
  };
}

const CSV_HEADER = ['event_id', 'started_at', 'ended_at', 'limit_w', 'cause', 'contacts', 'confirmed_at', 'late', 'charge_point_id', 'connector_id', 'share_a', 'in_force_a', 'connector_confirmed_at'];

/** A CSV field (RFC 4180): quoted when it holds a comma, quote or line break. */
const field = (v: unknown) => {
  const s = v === null || v === undefined ? '' : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

function csvOf(events: readonly DimmingEvent[]): string {
  const rows = [CSV_HEADER];
  for (const e of events) {
    const head = [e.id, formatUtc(e.startedAtMs), iso(e.endedAtMs), e.limitW, e.cause, e.contacts?.map((c) => (c ? 1 : 0)).join('') ?? '', iso(e.confirmedAtMs), e.late];
    if (e.connectors.length === 0) rows.push([...head, '', '', '', '', ''].map(field));
    for (const c of e.connectors) rows.push([...head, c.charge_point_id, c.connector_id, c.share_a, c.in_force_a, iso(c.confirmed_at_ms)].map(field));
  }
  return rows.map((r) => r.join(',')).join('\r\n') + '\r\n';
}

export function registerGridDimmingRoutes(router: Router, deps: RouteDeps): void {
  const auth = requireToken(deps, { scheme: 'Token', type: 'cpo' });
  const store = new DimmingStore(deps.db);
  router.get(GRID_DIMMING_PATH, auth, (req, res) => {
    const nowMs = deps.clock.now();
    const errors: Array<{ path: string; message: string }> = [];
    const at = (name: 'from' | 'to', fallback: number) => {
      const raw = req.query[name];
      if (raw === undefined) return fallback;
      const ms = typeof raw === 'string' ? parseTimestamp(raw) : 'must be one RFC 3339 timestamp';
      if (typeof ms === 'string') {
        errors.push({ path: name, message: ms });
        return fallback;
      }
      return ms;
    };
    const toMs = at('to', nowMs + 1);
    const fromMs = at('from', toMs - 31 * DAY_MS);
    const format = req.query.format ?? 'json';
    if (format !== 'json' && format !== 'csv') errors.push({ path: 'format', message: 'must be json or csv' });
    if (errors.length === 0 && fromMs >= toMs) errors.push({ path: 'from', message: 'must be before to' });
    if (errors.length > 0) throw new HttpProblem(422, 'invalid query', { errors });
    const events = store.between(fromMs, toMs, MAX_EVENTS);
    res.set('Cache-Control', 'no-store');
    if (format === 'csv') {
      res.type('text/csv; charset=utf-8').set('Content-Disposition', 'attachment; filename="dimming-events.csv"').send(csvOf(events));
      return;
    }
    res.json({ from: formatUtc(fromMs), to: formatUtc(toMs), events: events.map(eventView) });
  });
  router.all(GRID_DIMMING_PATH, methodNotAllowed(['GET']));
}
