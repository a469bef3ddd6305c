import type { Response, Router } from 'express';
import { assessHealth, type Health } from '../../ops/health.js';
import { VERSION } from '../../version.js';
import type { RouteDeps } from '../app.js';

/** A backlog older than this marks the broker "degraded" (a few poll intervals of slack). */
const MAX_OUTBOX_AGE_MS = 5 * 60_000;

/**
 * GET /healthz: the whole picture (200 when ready, 503 when not) with the reason for
 * every part that is not ok; /healthz/live: the process works (loops tick);
 * /healthz/ready: the gateway does its job (meters, broker, clock, prices).
 */
export function registerHealthRoutes(router: Router, deps: RouteDeps): void {
  const startedAtMs = deps.clock.now();
  const assess = (): Health => {
    const p = deps.probes;
    return assessHealth({
      nowMs: deps.clock.now(),
      liveness: deps.liveness.check(),
      meters: p.meters?.() ?? null,
      uplink: p.uplink?.() ?? null,
      clock: p.clock?.() ?? null,
      prices: p.prices?.() ?? null,
      maxOutboxAgeMs: MAX_OUTBOX_AGE_MS,
    });
  };
  const send = (res: Response, ok: boolean, body: object) => {
    res.status(ok ? 200 : 503).set('Cache-Control', 'no-store').json(body);
  };
  router.get('/healthz', (_req, res) => {
    const h = assess();
    send(res, h.ready, { ...h, version: VERSION, uptime_s: Math.round((deps.clock.now() - startedAtMs) / 1000) });
  });
  router.get('/healthz/live', (_req, res) => {
    const h = assess();
    send(res, h.live, { live: h.live, reasons: h.live ? [] : [`loops: ${h.components.loops.detail}`] });
  });
  router.get('/healthz/ready', (_req, res) => {
    const h = assess();
    send(res, h.ready, { ready: h.ready, reasons: h.reasons });
  });
}
