import type { MeterProfile } from '../../config/types.js';

/** Built-in meter profiles by name. Each profile is data (one file per meter model). */
export const builtInProfiles: Readonly<Record<string, MeterProfile>> = {};
