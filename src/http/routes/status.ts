import { readFileSync } from 'node:fs';
import type { Router } from 'express';
import { buildStatusReport } from '../../ops/observability/status-report.js';
import { pageBody, toHtml } from '../../ops/observability/status/render.js';
import type { RouteDeps } from '../deps.js';

// The page is static (src/ops/observability/status/, copied to dist/ by the build), read once at start.
const asset = (name: string) => readFileSync(new URL(`../../ops/observability/status/${name}`, import.meta.url), 'utf8');

// Everything comes from this origin; the page works on a gateway without internet.
const CSP = "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'";

const PAGE_MARK = /<!--page:[^>]*-->/;

/**
 * GET /status: the local status page with the data in its first HTML (rendered here by
 * render.js, the renderer the page's script refreshes it with), so curl, a text browser or
 * a screenshot shows it without running a script; GET /status.json: the data it shows.
 */
export function registerStatusRoutes(router: Router, deps: RouteDeps): void {
  const template = asset('index.html');
  if (!PAGE_MARK.test(template)) throw new Error('status/index.html has no <!--page: ...--> mark');
  const scripts: Record<string, string> = { 'status.js': asset('status.js'), 'render.js': asset('render.js') };
  const startedAtMs = deps.clock.now();
  const report = () => buildStatusReport({ ...deps, startedAtMs });
  router.get('/status', (_req, res) => {
    const r = report();
    const html = template
      .replace('<body>', `<body data-rendered="${toHtml(r.generated_at ?? '')}">`)
      .replace(PAGE_MARK, () => pageBody(r).map(toHtml).join('\n'));
    res.status(200).type('html').set('Content-Security-Policy', CSP).set('Cache-Control', 'no-store').send(html);
  });
  // One route per script, named: static assets, not API paths (openapi-coverage leaves .js out).
  for (const [name, js] of Object.entries(scripts)) {
    router.get(`/status/${name}`, (_req, res) => {
      res.status(200).type('application/javascript').set('Cache-Control', 'no-cache').send(js);
    });
  }
  router.get('/status.json', (_req, res) => {
    res.status(200).set('Cache-Control', 'no-store').json(report());
  });
}
