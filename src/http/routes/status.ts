import { readFileSync } from 'node:fs';
import type { Router } from 'express';
import { buildStatusReport } from '../../ops/observability/status-report.js';
import type { RouteDeps } from '../deps.js';

// The page is static (src/ops/observability/status/, copied to dist/ by the build), read once at start.
const asset = (name: string) => readFileSync(new URL(`../../ops/observability/status/${name}`, import.meta.url), 'utf8');

// Everything comes from this origin; the page works on a gateway without internet.
const CSP = "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'";

/** GET /status: the local status page; GET /status.json: the data it shows. */
export function registerStatusRoutes(router: Router, deps: RouteDeps): void {
  const html = asset('index.html');
  const js = asset('status.js');
  const startedAtMs = deps.clock.now();
  router.get('/status', (_req, res) => {
    res.status(200).type('html').set('Content-Security-Policy', CSP).set('Cache-Control', 'no-cache').send(html);
  });
  router.get('/status/status.js', (_req, res) => {
    res.status(200).type('application/javascript').set('Cache-Control', 'no-cache').send(js);
  });
  router.get('/status.json', (_req, res) => {
    res.status(200).set('Cache-Control', 'no-store').json(buildStatusReport({ ...deps, startedAtMs }));
  });
}
