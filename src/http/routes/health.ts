import type { Router } from 'express';
import { currentHealth, currentLiveness } from '../../ops/observability/current-health.js';
import { healthHttpStatus } from '../../ops/observability/health.js';
import { VERSION } from '../../version.js';
import type { RouteDeps } from '../deps.js';
import { localClient } from '../local-only.js';

/**
 * GET /healthz: the whole picture with the reason for every component not ok;
 * /healthz/ready: the same verdict, short; /healthz/live: the process works (loops tick).
 * The codes come from healthHttpStatus (docs/http-api.md#health): 503 only when down / not live.
 * A client that /status would refuse gets the same verdicts with reasons that name no
 * resource id, topic or broker host.
 */
export function registerHealthRoutes(router: Router, deps: RouteDeps): void {
  const startedAtMs = deps.clock.now();
  const local = localClient(deps.config.http);
  router.get('/healthz', (req, res) => {
    const h = currentHealth(deps, { redactForLan: !local(req) });
    res.status(healthHttpStatus(h, 'combined')).set('Cache-Control', 'no-store').json({ ...h, version: VERSION, uptime_s: Math.round((deps.clock.now() - startedAtMs) / 1000) });
  });
  router.get('/healthz/ready', (req, res) => {
    const h = currentHealth(deps, { redactForLan: !local(req) });
    res.status(healthHttpStatus(h, 'ready')).set('Cache-Control', 'no-store').json({ status: h.status, ready: h.ready, reasons: h.reasons });
  });
  router.get('/healthz/live', (_req, res) => {
    const h = currentLiveness(deps);
    res.status(healthHttpStatus(h, 'live')).set('Cache-Control', 'no-store').json({ live: h.live, reasons: h.reasons });
  });
}
