// The OCPP 1.6 validator every call is checked with (strict mode): the official JSON
// schemas ocpp-rpc ships, with the bounds they leave out (schema-constraints.json: no
// negative register or connector id, 32-bit integers) added. A call outside them gets the
// protocol's CallError (FormationViolation) before a handler runs, as any schema failure.
//
// ocpp-rpc's own createValidator (lib/validator.js) does exactly what Ocpp16Validator does,
// on its pinned copy of ajv 8.14 with ajv-formats and uri-js: requiring it loads that second
// ajv beside the one the daemon bundles (~1 MB of V8 heap kept for good: its modules' source
// and code, uri-js's tables). So the same validator is built here on the bundled ajv, with
// the same options, the same multipleOf keyword and the same error mapping (ocpp-rpc 2.2.1,
// MIT: https://github.com/mikuso/ocpp-rpc/blob/042e695e4d3a4d024e5416f68025c8232ddfb1da/lib/validator.js).
// ocpp-rpc only calls `validate(schemaId, params)` and reads `subprotocol`. Its formats are
// ajv-formats 2.1.1's: the bundled ajv-formats 3 refuses a date-time without a zone, so
// date-time is 2.1.1's (ocpp-date-time.ts); `uri`, the only other format the schemas use, is
// the same in both. test/unit/ocpp-validator-parity.test.ts runs ocpp-rpc's own validator beside this one.
// Each action's schema is compiled the first time a call of that action is checked.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { Validator as OcppRpcValidator } from 'ocpp-rpc/lib/validator.js';
import { compareOcppDateTime, ocppDateTime } from './ocpp-date-time.js';

// ajv-formats' CJS default export is the plugin function; its typings do not say so under NodeNext.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

interface SchemaDoc {
  readonly $id: string;
  readonly properties?: Record<string, Record<string, unknown>>;
}

const require = createRequire(import.meta.url);
// lib/util.js alone (errors and the package's version): the package's index requires lib/validator.js.
const { createRPCError } = require('ocpp-rpc/lib/util.js') as { createRPCError(type: string, message?: string, details?: Record<string, unknown>): Error };

/** ocpp-rpc's mapping from the first failed ajv keyword to the OCPP CallError code (FormatViolation otherwise). */
const errorCodeByKeyword: Readonly<Record<string, string>> = {
  maximum: 'FormatViolation',
  minimum: 'FormatViolation',
  maxLength: 'FormatViolation',
  minLength: 'FormatViolation',
  exclusiveMaximum: 'OccurenceConstraintViolation',
  exclusiveMinimum: 'OccurenceConstraintViolation',
  multipleOf: 'OccurenceConstraintViolation',
  maxItems: 'OccurenceConstraintViolation',
  minItems: 'OccurenceConstraintViolation',
  maxProperties: 'OccurenceConstraintViolation',
  minProperties: 'OccurenceConstraintViolation',
  additionalItems: 'OccurenceConstraintViolation',
  required: 'OccurenceConstraintViolation',
  pattern: 'PropertyConstraintViolation',
  propertyNames: 'PropertyConstraintViolation',
  additionalProperties: 'PropertyConstraintViolation',
  type: 'TypeConstraintViolation',
};

/**
 * The schema's id as the bundled ajv keeps it: OCPP's `urn:Authorize.req` has no namespace id,
 * and ajv's URI library (fast-uri) refuses to serialize such a URN ("URN without nid cannot be
 * serialized", https://github.com/fastify/fast-uri/pull/141); ajv 8.14 used uri-js, which
 * took it. The schemas' own references are local (#/definitions/...), so a namespace id
 * changes nothing else (one ajv instance per subprotocol, so one namespace serves both).
 */
function ajvId(schemaId: string): string {
  return schemaId.replace(/^urn:/, 'urn:ocpp16:');
}

/**
 * What ocpp-rpc's strict mode needs of a validator (its lib/validator.js Validator), for one
 * subprotocol. `schemaOf` hands out an action's schema the first time a call of it is
 * checked: it is added to ajv and compiled then, and only then.
 */
export class OcppValidator {
  private readonly ajv: Ajv;

  constructor(
    readonly subprotocol: string,
    private readonly schemaOf: (schemaId: string) => SchemaDoc | undefined,
  ) {
    this.ajv = new Ajv({ strictSchema: false });
    addFormats(this.ajv);
    this.ajv.addFormat('date-time', { type: 'string', validate: ocppDateTime, compare: compareOcppDateTime });
    // As ocpp-rpc: decimal multiples within a small epsilon (0.1 is not a binary fraction).
    this.ajv.removeKeyword('multipleOf');
    this.ajv.addKeyword({
      keyword: 'multipleOf',
      type: 'number',
      compile(step: number) {
        return (data: number) => {
          const result = data / step;
          return Math.abs(Math.round(result) - result) < 1e-6;
        };
      },
      errors: false,
      metaSchema: { type: 'number' },
    });
  }

  /** Throws ocpp-rpc's RPCError for the first failed keyword; a schema id it does not have is a ProtocolError. */
  validate(schemaId: string, params: unknown): boolean {
    let validate = this.ajv.getSchema(ajvId(schemaId));
    if (!validate) {
      const schema = this.schemaOf(schemaId);
      if (schema) {
        this.ajv.addSchema({ ...schema, $id: ajvId(schema.$id) });
        validate = this.ajv.getSchema(ajvId(schemaId));
      }
    }
    if (!validate) throw createRPCError('ProtocolError', `Schema '${schemaId}' is missing from subprotocol schema '${this.subprotocol}'`);
    const valid = validate(params) as boolean;
    const errors: ErrorObject[] | null | undefined = validate.errors;
    if (!valid && errors && errors.length > 0) {
      throw createRPCError(errorCodeByKeyword[errors[0].keyword] ?? 'FormatViolation', this.ajv.errorsText(errors), { errors, data: params });
    }
    return valid;
  }
}

/** The OCPP 1.6 validator: every schema given at once (77 kB, with our bounds merged in). */
export class Ocpp16Validator extends OcppValidator {
  constructor(schemas: readonly SchemaDoc[]) {
    const byId = new Map(schemas.map((s) => [s.$id, s]));
    super('ocpp1.6', (id) => byId.get(id));
  }
}

let shared: Ocpp16Validator | undefined;

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
export function ocpp16Validator(): Ocpp16Validator {
  return (shared ??= new Ocpp16Validator(ocpp16Schemas()));
}

/** The validator as ocpp-rpc's strictModeValidators option types it (its class, with its own ajv in a field; the library only calls validate and reads subprotocol). */
export function ocpp16StrictValidator(): OcppRpcValidator {
  return ocpp16Validator() as unknown as OcppRpcValidator;
}

let shared201: OcppValidator | undefined;

/**
 * The OCPP 2.0.1 validator (ocpp-rpc's copy of the official 2.0.1 schemas, lib/schemas/
 * ocpp2_0_1.json), built on the bundled ajv as the 1.6 one. Nothing of it exists until a
 * 2.0.1 charger's first message is checked: a gateway with 1.6 chargers only pays nothing
 * (docs/architecture.md "Memory"). The file (525 kB of JSON, 128 schemas) is read when an
 * action is first checked and held only weakly: once every action a charger uses is
 * compiled, the parsed file is garbage; an action seen later reads it again.
 */
export function ocpp201Validator(): OcppValidator {
  if (shared201) return shared201;
  let parsed: WeakRef<Map<string, SchemaDoc>> | null = null;
  const schemaOf = (id: string): SchemaDoc | undefined => {
    let byId = parsed?.deref();
    if (!byId) {
      const all = JSON.parse(readFileSync(require.resolve('ocpp-rpc/lib/schemas/ocpp2_0_1.json'), 'utf8')) as SchemaDoc[];
      byId = new Map(all.map((s) => [s.$id, s]));
      parsed = new WeakRef(byId);
    }
    return byId.get(id);
  };
  return (shared201 = new OcppValidator('ocpp2.0.1', schemaOf));
}

/** Whether the 2.0.1 validator was built in this process (a 2.0.1 charger sent a message, or one of ours went to it). */
export function ocpp201ValidatorBuilt(): boolean {
  return shared201 !== undefined;
}

/**
 * What ocpp-rpc is given for ocpp2.0.1 at load (rpc.ts): an object with the subprotocol
 * and a validate that builds the real validator on its first call, so that requiring the
 * library or starting the server costs nothing for 2.0.1.
 */
export function ocpp201StrictValidator(): OcppRpcValidator {
  const lazy = { subprotocol: 'ocpp2.0.1', validate: (schemaId: string, params: unknown) => ocpp201Validator().validate(schemaId, params) };
  return lazy as unknown as OcppRpcValidator;
}
