// The OCPP 1.6 validator every call is checked with (strict mode): the official JSON
// schemas ocpp-rpc ships, with the bounds they leave out (schema-constraints.json: no
// negative register or connector id, 32-bit integers) added. A call outside them gets the
// protocol's CallError (FormationViolation) before a handler runs, as any schema failure.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import type { createValidator as CreateValidator } from 'ocpp-rpc';

interface SchemaDoc {
  readonly $id: string;
  readonly properties?: Record<string, Record<string, unknown>>;
}

const require = createRequire(import.meta.url);
// lib/validator.js itself, not the package: requiring the package builds its standard
// validators (rpc.ts says why the central system does without them).
const { createValidator } = require('ocpp-rpc/lib/validator.js') as { createValidator: typeof CreateValidator };
let shared: ReturnType<typeof CreateValidator> | undefined;

/** ocpp-rpc's ocpp1.6 schemas with our constraints merged into the named properties. */
export function ocpp16Schemas(): SchemaDoc[] {
  const official = JSON.parse(readFileSync(require.resolve('ocpp-rpc/lib/schemas/ocpp1_6.json'), 'utf8')) as SchemaDoc[];
  const constraints = JSON.parse(readFileSync(new URL('./schema-constraints.json', import.meta.url), 'utf8')) as Record<string, Record<string, Record<string, unknown>>>;
  return official.map((schema) => {
    const extra = constraints[schema.$id];
    if (!extra) return schema;
    const properties = { ...schema.properties };
    for (const [name, bounds] of Object.entries(extra)) {
      if (!properties[name]) throw new Error(`schema-constraints.json: ${schema.$id} has no property ${name}`);
      properties[name] = { ...properties[name], ...bounds };
    }
    return { ...schema, properties };
  });
}

/** The validator (one per process: it holds nothing per call, and each ajv instance with the schemas costs about 1.3 MB of heap). */
export function ocpp16Validator(): ReturnType<typeof CreateValidator> {
  return (shared ??= createValidator('ocpp1.6', ocpp16Schemas()));
}
