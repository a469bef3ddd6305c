// How `scan` tells meter models apart, as data. Vendors keep a model code in a register:
// Eastron in holding register 0xFC02 (first word of a 32-bit value), Carlo Gavazzi in
// 0x000B (function 03 or 04). Codes as used by Victron's dbus-modbus-client probe tables
// (eastron.py / carlo_gavazzi.py). ABB B23/B24 has no such code in its map, so it is
// recognised by answering plausible line voltages at its own addresses with function 03.
import type { FunctionCode } from './planner.js';

export interface ModelCodeProbe {
  readonly vendor: string;
  readonly functionCode: FunctionCode;
  readonly address: number;
  readonly count: number;
  /** Model code (first word) -> built-in profile name. */
  readonly codes: Readonly<Record<number, string>>;
}

export const modelCodeProbes: readonly ModelCodeProbe[] = [
  {
    vendor: 'Eastron',
    functionCode: 3,
    address: 0xfc02,
    count: 2,
    codes: { 112: 'sdm630', 121: 'sdm630', 136: 'sdm630', 32: 'sdm120', 132: 'sdm72d', 135: 'sdm72d', 137: 'sdm72d' },
  },
  {
    vendor: 'Carlo Gavazzi',
    functionCode: 4,
    address: 0x000b,
    count: 1,
    codes: { 1648: 'em24', 1649: 'em24', 1650: 'em24', 1651: 'em24', 1652: 'em24', 1653: 'em24', 340: 'em340', 341: 'em340', 345: 'em340' },
  },
];

/** The model code a simulated meter of this profile answers with (first matching code). */
export function modelCodeFor(profile: string): { probe: ModelCodeProbe; code: number } | null {
  for (const probe of modelCodeProbes) {
    const entry = Object.entries(probe.codes).find(([, name]) => name === profile);
    if (entry) return { probe, code: Number(entry[0]) };
  }
  return null;
}

/** Plausible mains line-to-neutral voltage (230 V or 110/120 V systems, generous margins). */
export function isPlausibleVoltage(v: number | null): boolean {
  return v !== null && Number.isFinite(v) && ((v >= 90 && v <= 140) || (v >= 180 && v <= 270));
}
