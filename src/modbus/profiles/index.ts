// Built-in meter profiles: one YAML file per meter model in this folder, named for the
// profile (`sdm630.yaml` is profile `sdm630`). Adding a meter is adding a file; each file
// says which manual its registers were checked against.
import { readdirSync, readFileSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { meterProfileErrors } from '../../config/config-schema.js';
import type { MeterProfile } from '../../config/types.js';

const PROFILES_DIR = fileURLToPath(new URL('.', import.meta.url));

/** Reads and checks every profile file; a broken one is a packaging bug, so it throws. */
export function loadBuiltInProfiles(dir: string): Record<string, MeterProfile> {
  const profiles: Record<string, MeterProfile> = {};
  for (const file of readdirSync(dir).filter((f) => extname(f) === '.yaml').sort()) {
    const profile: unknown = parse(readFileSync(join(dir, file), 'utf8'));
    const errors = meterProfileErrors(profile);
    if (errors.length > 0) {
      const problems = errors.map((e) => `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}`).join('; ');
      throw new Error(`built-in meter profile ${file}: ${problems}`);
    }
    profiles[basename(file, '.yaml')] = profile as MeterProfile;
  }
  return profiles;
}

/** Built-in meter profiles by name. */
export const builtInProfiles: Readonly<Record<string, MeterProfile>> = Object.freeze(loadBuiltInProfiles(PROFILES_DIR));

/** A meter's profile: user-defined profiles in the config win over built-in ones of the same name. */
export function resolveProfile(name: string, userProfiles: Readonly<Record<string, MeterProfile>> = {}): MeterProfile | undefined {
  return userProfiles[name] ?? builtInProfiles[name];
}
