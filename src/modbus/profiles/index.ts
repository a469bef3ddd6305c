import type { MeterProfile } from '../../config/types.js';
import { abbB23 } from './abb-b23.js';
import { em24 } from './em24.js';
import { em24E1 } from './em24-e1.js';
import { em340 } from './em340.js';
import { sdm120 } from './sdm120.js';
import { sdm630 } from './sdm630.js';
import { sdm72d } from './sdm72d.js';

/** Built-in meter profiles by name. Each profile is data (one file per meter model). */
export const builtInProfiles: Readonly<Record<string, MeterProfile>> = Object.freeze({
  sdm630,
  sdm120,
  sdm72d,
  'abb-b23': abbB23,
  em24,
  'em24-e1': em24E1,
  em340,
});

/** A meter's profile: user-defined profiles in the config win over built-in ones of the same name. */
export function resolveProfile(name: string, userProfiles: Readonly<Record<string, MeterProfile>> = {}): MeterProfile | undefined {
  return userProfiles[name] ?? builtInProfiles[name];
}
