// The M-Bus devices a DSMR meter relays (gas, water, heat) from one telegram (pure): per
// channel n its device type (0-n:24.1.0), equipment id (0-n:96.1.0 or 96.1.1, hex-encoded ASCII) and the
// last reading with the channel's own capture time (0-n:24.2.x: `(YYMMDDhhmmssX)(value*unit)`),
// as metrics in the gateway's names and units (docs/p1.md "M-Bus channels"):
//   gas_volume m3          device type 3 (gas)
//   water_volume m3        7 (water), 22 (cold water)
//   hot_water_volume m3    6 (warm water), 21 (hot water)
//   heat_energy Wh         4 (heat, outlet), 12 (heat, inlet), 13 (heat/cooling): GJ, MWh, kWh, Wh to Wh
//   cooling_energy Wh      10, 11 (cooling)
// DSMR 2.2/3.0 write a channel as `0-n:24.3.0(YYMMDDhhmmss)(00)(60)(1)(0-n:24.2.1)(m3)` with the
// value on the next line `(00001.001)`: the capture time in Dutch local time without S/W (the
// hour repeated in October read as summer time), the unit in its own parentheses.
import type { Metric } from '../domain.js';
import { decodeEquipmentId, round3 } from './measurements.js';
import { parseDutchLocalTime, parseMeterTime } from './meter-time.js';
import type { ObisValue, Telegram } from './telegram.js';

export interface MbusKind {
  /** `gas`, `water`, ... for boot_notification's model. */
  readonly medium: string;
  readonly metric: string;
  /** The unit published and the factors from the units meters send. */
  readonly unit: string;
  readonly factors: Readonly<Record<string, number>>;
}

const VOLUME = { unit: 'm3', factors: { m3: 1, 'm³': 1 } } as const;
const ENERGY = { unit: 'Wh', factors: { GJ: 1e9 / 3600, MWh: 1e6, kWh: 1000, Wh: 1 } } as const;

/** By M-Bus device type (EN 13757-3), as DSMR writes it in 0-n:24.1.0 (decimal). */
const KINDS: Readonly<Record<number, MbusKind>> = {
  3: { medium: 'gas', metric: 'gas_volume', ...VOLUME },
  7: { medium: 'water', metric: 'water_volume', ...VOLUME },
  22: { medium: 'cold water', metric: 'water_volume', ...VOLUME },
  6: { medium: 'warm water', metric: 'hot_water_volume', ...VOLUME },
  21: { medium: 'hot water', metric: 'hot_water_volume', ...VOLUME },
  4: { medium: 'heat', metric: 'heat_energy', ...ENERGY },
  12: { medium: 'heat (inlet)', metric: 'heat_energy', ...ENERGY },
  13: { medium: 'heat/cooling', metric: 'heat_energy', ...ENERGY },
  10: { medium: 'cooling', metric: 'cooling_energy', ...ENERGY },
  11: { medium: 'cooling (inlet)', metric: 'cooling_energy', ...ENERGY },
};

export interface MbusChannel {
  readonly number: number;
  /** The M-Bus device type, null when the meter leaves 0-n:24.1.0 out. */
  readonly deviceType: number | null;
  readonly medium: string;
  readonly equipmentId: string | null;
  /** The reading and when the device captured it; null when the channel has none usable (no unit, no time, an unknown kind). */
  readonly reading: { readonly capturedAtMs: number; readonly metrics: readonly Metric[] } | null;
  /** Why there is no reading, when there is none. */
  readonly skipped: string | null;
}

/** `heardAtMs`: when the telegram was received, to place DSMR 2.2/3.0 capture times in October's repeated hour. */
export function mbusChannels(telegram: Telegram, heardAtMs?: number): MbusChannel[] {
  const numbers = new Set<number>();
  for (const obis of telegram.objects.keys()) {
    const m = /^0-([1-4]):(24\.1\.0|24\.2\.\d|24\.3\.0|96\.1\.[01])$/.exec(obis);
    if (m) numbers.add(Number(m[1]));
  }
  return [...numbers].sort((a, b) => a - b).map((n) => channel(telegram, n, heardAtMs));
}

function channel(telegram: Telegram, n: number, heardAtMs: number | undefined): MbusChannel {
  const typeRaw = telegram.objects.get(`0-${n}:24.1.0`)?.[0]?.raw;
  const deviceType = typeRaw !== undefined && /^\d{1,3}$/.test(typeRaw) ? Number(typeRaw) : null;
  // DSMR writes the device's id in 0-n:96.1.0, Belgian meters in 0-n:96.1.1.
  const idRaw = telegram.objects.get(`0-${n}:96.1.0`)?.[0]?.raw || telegram.objects.get(`0-${n}:96.1.1`)?.[0]?.raw;
  const equipmentId = idRaw ? decodeEquipmentId(idRaw) || null : null;
  const kind = deviceType === null ? undefined : KINDS[deviceType];
  const base = { number: n, deviceType, medium: kind?.medium ?? (deviceType === null ? 'unknown' : `device type ${deviceType}`), equipmentId };
  // DSMR 5 names the gas reading 24.2.1, Belgian meters 24.2.3 (gas, not temperature-corrected) and 24.2.1 (water).
  const values = [...telegram.objects.entries()].find(([obis]) => obis.startsWith(`0-${n}:24.2.`))?.[1];
  const old = values ? null : dsmr22Reading(telegram.objects.get(`0-${n}:24.3.0`), n);
  if (!values && !old) return { ...base, reading: null, skipped: 'no reading (0-n:24.2.x, or DSMR 2.2/3.0 0-n:24.3.0 with its value line)' };
  if (!kind) return { ...base, reading: null, skipped: `device type ${deviceType ?? 'not given'} is not gas, water or heat` };
  const [time, value] = old ? [old.time, old.value] : values!;
  const capturedAtMs = time ? (old ? parseDutchLocalTime(time.raw, heardAtMs) : parseMeterTime(time.raw)) : null;
  if (capturedAtMs === null) return { ...base, reading: null, skipped: `no capture time in ${JSON.stringify(time?.raw ?? '')}` };
  const factor = value?.unit ? kind.factors[value.unit] : undefined;
  if (!value || factor === undefined) return { ...base, reading: null, skipped: `unit ${JSON.stringify(value?.unit ?? null)} is not one of ${Object.keys(kind.factors).join(', ')}` };
  if (!/^\d+(\.\d+)?$/.test(value.raw)) return { ...base, reading: null, skipped: `not a number: ${JSON.stringify(value.raw)}` };
  return { ...base, reading: { capturedAtMs, metrics: [{ name: kind.metric, value: round3(Number(value.raw) * factor), unit: kind.unit }] }, skipped: null };
}

/**
 * A DSMR 2.2/3.0 channel object `(time)(status)(period)(count)(0-n:24.2.1)(unit)` + `(value)`
 * as the 24.2.x pair (time, value*unit), or null when it is not laid out so.
 */
function dsmr22Reading(values: readonly ObisValue[] | undefined, n: number): { time: ObisValue; value: ObisValue } | null {
  if (!values || values.length !== 7) return null;
  const [time, , , , ref, unit, value] = values;
  if (!new RegExp(`^0-${n}:24\\.2\\.\\d$`).test(ref!.raw) || unit!.unit !== null || value!.unit !== null) return null;
  return { time: time!, value: { raw: value!.raw, unit: unit!.raw } };
}
