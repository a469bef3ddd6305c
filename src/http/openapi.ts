// The OpenAPI 3.1 document of the whole HTTP API (src/http/openapi.json, data), and the
// JSON Schemas of request bodies taken from it, so the served document and the
// validation at the edge can never disagree.
import { readFileSync } from 'node:fs';

export const openApiDocument = JSON.parse(readFileSync(new URL('./openapi.json', import.meta.url), 'utf8')) as {
  openapi: string;
  paths: Record<string, unknown>;
  components: { schemas: Record<string, unknown> };
};
