// Validates real HTTP responses against the served OpenAPI document: the operation and
// status must be documented, and the body must match the documented schema.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { expect } from 'vitest';
import { openApiDocument } from '../../src/http/openapi.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const ajv = new Ajv2020({ allErrors: true, strict: false, allowUnionTypes: true });
addFormats(ajv);
ajv.addSchema(openApiDocument as object, 'openapi.json');

type Json = Record<string, unknown>;
const cache = new Map<string, ValidateFunction>();

function validatorFor(schema: Json): ValidateFunction {
  const key = JSON.stringify(schema);
  let v = cache.get(key);
  if (!v) {
    const ref = schema.$ref;
    v = typeof ref === 'string' ? ajv.getSchema(`openapi.json${ref}`)! : ajv.compile(schema);
    cache.set(key, v);
  }
  return v;
}

/** Asserts `res` (already read into `body`) is documented for `method pathTemplate` and matches. */
export function expectDocumented(method: string, pathTemplate: string, res: Response, body: unknown): void {
  const op = (openApiDocument.paths[pathTemplate] as Json | undefined)?.[method.toLowerCase()] as Json | undefined;
  expect(op, `${method} ${pathTemplate} is in openapi.json`).toBeDefined();
  const response = (op!.responses as Json)[String(res.status)] as Json | undefined;
  expect(response, `${method} ${pathTemplate} documents status ${res.status}`).toBeDefined();
  const contentType = (res.headers.get('content-type') ?? '').split(';')[0].trim();
  const content = response!.content as Record<string, { schema: Json }> | undefined;
  if (!content) return;
  expect(Object.keys(content), `${method} ${pathTemplate} ${res.status} documents ${contentType}`).toContain(contentType);
  const validate = validatorFor(content[contentType].schema);
  const ok = validate(body);
  expect(ok ? [] : validate.errors, `${method} ${pathTemplate} ${res.status} body matches the schema`).toEqual([]);
}
