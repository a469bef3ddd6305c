import type { Router } from 'express';
import { VERSION } from '../../version.js';
import type { RouteDeps } from '../app.js';

/** GET /healthz: liveness for systemd, load balancers and installers. */
export function registerHealthRoutes(router: Router, deps: RouteDeps): void {
  const startedAtMs = deps.clock.now();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok', version: VERSION, uptime_s: Math.round((deps.clock.now() - startedAtMs) / 1000) });
  });
}
