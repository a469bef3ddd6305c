// The configuration's JSON Schema and the ajv instance that checks it. Built-in meter
// profiles (modbus/profiles/*.yaml) are checked against the same `#/$defs/profile` as a
// user's `profiles:` entries, so both kinds get the same defaults and the same errors.
//
// The compiled validators are held weakly: a running daemon checks a configuration at start
// and again only when told to reload (SIGHUP), so the ajv instance with the compiled schema
// (~0.4 MB of V8 heap) may be collected in between and is compiled again when next needed
// (docs/architecture.md, Memory).
import { readFileSync } from 'node:fs';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { MeterProfile } from './types.js';

// ajv-formats' CJS default export is the plugin function; its typings do not say so under NodeNext.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export const configSchema = JSON.parse(
  readFileSync(new URL('./schema.json', import.meta.url), 'utf8'),
) as Record<string, unknown> & { $id: string };

interface ConfigValidators {
  readonly document: ValidateFunction<unknown>;
  readonly profile: ValidateFunction<MeterProfile>;
}

let held: WeakRef<ConfigValidators> | undefined;

function validators(): ConfigValidators {
  const kept = held?.deref();
  if (kept) return kept;
  const ajv = new Ajv2020({ allErrors: true, useDefaults: true, strict: true, strictRequired: false, allowUnionTypes: true });
  addFormats(ajv);
  ajv.addSchema(configSchema);
  const compiled = <T>(ref: string): ValidateFunction<T> => {
    const validate = ajv.getSchema<T>(ref);
    if (!validate) throw new Error(`config schema: ${ref} is missing`);
    return validate;
  };
  const built: ConfigValidators = { document: compiled(configSchema.$id), profile: compiled(`${configSchema.$id}#/$defs/profile`) };
  held = new WeakRef(built);
  return built;
}

/** Checks a whole configuration document and fills its defaults in place; its problems, none when it is valid. */
export function configDocumentErrors(doc: unknown): ErrorObject[] {
  const validate = validators().document;
  return validate(doc) ? [] : [...(validate.errors ?? [])];
}

/** Checks one meter profile and fills its defaults in place; its problems, none when it is valid. */
export function meterProfileErrors(profile: unknown): ErrorObject[] {
  const validate = validators().profile;
  return validate(profile) ? [] : [...(validate.errors ?? [])];
}
