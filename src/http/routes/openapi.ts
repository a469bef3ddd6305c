import type { Router } from 'express';
import { openApiDocument } from '../openapi.js';

/**
 * GET /api/v1/openapi.json: the OpenAPI 3.1 document of the whole API (no auth). Serialized
 * per request: a rare one, and the ~0.2 MB string is not kept for good (docs/architecture.md, Memory).
 */
export function registerOpenApiRoutes(router: Router): void {
  router.get('/api/v1/openapi.json', (_req, res) => {
    res.type('application/json').send(JSON.stringify(openApiDocument));
  });
}
