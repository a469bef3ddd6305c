// Manufacturer names for the three-letter FLAG id that starts a meter's identification line
// (`/ISk5\2MT382-1000` → ISK). The ids are the FLAG Association's registry (the same one M-Bus
// uses), kept as data in flag-ids.json with its source; a few flags mean something else on a
// P1 port (the Belgian grid operator's FLU is not the registry's Shandong Feilong) or have a
// shorter common name: those are P1_NAMES. The flag is case-insensitive (a lower-case third
// letter only says the meter answers within 20 ms).
import { readFileSync } from 'node:fs';

interface FlagRegistry {
  readonly ids: Readonly<Record<string, string>>;
}

const REGISTRY = (JSON.parse(readFileSync(new URL('./flag-ids.json', import.meta.url), 'utf8')) as FlagRegistry).ids;

/** Flags as they are known on P1 ports (DSMR), before the registry. */
const P1_NAMES: Readonly<Record<string, string>> = {
  EMH: 'EMH metering',
  FLU: 'Fluvius',
  ISK: 'Iskraemeco',
  KFM: 'Kaifa',
  KMP: 'Kamstrup',
  LGZ: 'Landis+Gyr',
  XMX: 'Xemex',
};

/** The manufacturer's name for a FLAG id, or the flag itself when it is not registered. */
export function vendorOfFlag(flag: string): string {
  const id = flag.toUpperCase();
  const name = P1_NAMES[id] ?? REGISTRY[id];
  // The registry names end in the country (`eBZ, Germany`): the vendor is the name before it.
  return name ? name.replace(/, [^,]+$/, '') : flag;
}
