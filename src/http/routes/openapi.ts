import type { Router } from 'express';
import { openApiDocument } from '../openapi.js';

/** GET /api/v1/openapi.json: the OpenAPI 3.1 document of the whole API (no auth). */
export function registerOpenApiRoutes(router: Router): void {
  const body = JSON.stringify(openApiDocument);
  router.get('/api/v1/openapi.json', (_req, res) => {
    res.type('application/json').send(body);
  });
}
