// Request validation at the edge: JSON Schemas taken from the OpenAPI document (one
// source for docs and checks), ajv errors turned into [{path, message}] with client paths.
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { openApiDocument } from './openapi.js';
import type { FieldError } from './errors.js';
import { pointerToPath } from '../json-path.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

// strict: false because the document around the schemas has OpenAPI keywords ajv does not know.
const ajv = new Ajv2020({ allErrors: true, strict: false, allowUnionTypes: true });
addFormats(ajv);
ajv.addSchema(openApiDocument as object, 'openapi.json');

/** A compiled validator for `components.schemas.<name>` of the OpenAPI document. */
export function schemaValidator(name: string): ValidateFunction {
  const validate = ajv.getSchema(`openapi.json#/components/schemas/${name}`);
  if (!validate) throw new Error(`no schema ${name} in openapi.json`);
  return validate;
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

export function toFieldError(e: ErrorObject): FieldError {
  let path = pointerToPath(e.instancePath);
  let message = e.message ?? 'is invalid';
  switch (e.keyword) {
    case 'required':
      path = join(path, (e.params as { missingProperty: string }).missingProperty);
      message = 'is required';
      break;
    case 'additionalProperties':
      path = join(path, (e.params as { additionalProperty: string }).additionalProperty.slice(0, 100));
      message = 'is not a known field';
      break;
    case 'enum':
      message = `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
      break;
    case 'type':
      message = `must be ${String((e.params as { type: string | string[] }).type).replace(',', ' or ')}`;
      break;
    default:
      break;
  }
  return { path: path || '(body)', message };
}

/** Field errors of a failed validation, at most `max`, without repeats. */
export function fieldErrors(validate: ValidateFunction, max = 20): FieldError[] {
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const e of validate.errors ?? []) {
    // `if` only says that its `then` failed, which has its own, clearer error.
    if (e.keyword === 'if') continue;
    const fe = toFieldError(e);
    const key = `${fe.path}\u0000${fe.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(fe);
    if (out.length >= max) break;
  }
  return out;
}

function absoluteRefs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(absoluteRefs);
  if (node && typeof node === 'object') {
    return Object.fromEntries(
      Object.entries(node).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' && v.startsWith('#') ? `openapi.json${v}` : absoluteRefs(v)]),
    );
  }
  return node;
}

/**
 * The validator of `components.schemas.<name>` with the items of the array property
 * `arrayProperty` left unchecked: for arrays of up to 100,000 readings whose items are
 * checked by a hand-written loop that also parses them (see readings-input.ts).
 */
export function shellValidator(name: string, arrayProperty: string): ValidateFunction {
  const schema = absoluteRefs(openApiDocument.components.schemas[name]) as { properties: Record<string, Record<string, unknown>> };
  const { items: _items, ...array } = schema.properties[arrayProperty];
  return ajv.compile({ ...schema, properties: { ...schema.properties, [arrayProperty]: array } });
}
