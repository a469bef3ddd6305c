// The configuration's JSON Schema and the one ajv instance that checks it. Built-in meter
// profiles (modbus/profiles/*.yaml) are checked against the same `#/$defs/profile` as a
// user's `profiles:` entries, so both kinds get the same defaults and the same errors.
import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { MeterProfile } from './types.js';

// ajv-formats' CJS default export is the plugin function; its typings do not say so under NodeNext.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export const configSchema = JSON.parse(
  readFileSync(new URL('./schema.json', import.meta.url), 'utf8'),
) as Record<string, unknown> & { $id: string };

const ajv = new Ajv2020({ allErrors: true, useDefaults: true, strict: true, strictRequired: false, allowUnionTypes: true });
addFormats(ajv);
ajv.addSchema(configSchema);

function compiled<T>(ref: string): ValidateFunction<T> {
  const validate = ajv.getSchema<T>(ref);
  if (!validate) throw new Error(`config schema: ${ref} is missing`);
  return validate;
}

/** Checks a whole configuration document and fills its defaults in place. */
export const validateConfigDocument: ValidateFunction<unknown> = compiled(configSchema.$id);

/** Checks one meter profile and fills its defaults in place. */
export const validateMeterProfile: ValidateFunction<MeterProfile> = compiled(`${configSchema.$id}#/$defs/profile`);
