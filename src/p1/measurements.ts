// Maps a parsed telegram to the contract's metric names and units (the names the Modbus
// profiles publish too: one vocabulary), and reads what identifies the meter. Pure.
//   total_active_power W    = 1-0:1.7.0 − 1-0:2.7.0 (DSMR: delivered minus received, kW);
//                             mode D meters send it signed: 1-0:1.7.0 / 1.7.255 (EasyMeter), 16.7.0 (eBZ)
//   active_power_l1..l3 W   = 1-0:21/41/61.7.0 − 1-0:22/42/62.7.0 (DSMR per-phase delivered / received);
//                             signed 21/41/61.7.0 or .7.255 (EasyMeter), 36/56/76.7.0 (eBZ)
//   active_energy_import Wh = 1-0:1.8.1 + 1-0:1.8.2 (1-0:1.8.0 where the tariffs are absent)
//   active_energy_export Wh = 1-0:2.8.1 + 1-0:2.8.2 (1-0:2.8.0 likewise)
//   voltage_l1..l3 V from 1-0:32/52/72.7.0, current_l1..l3 A from 1-0:31/51/71.7.0 where present
import type { Metric } from '../domain.js';
import { p1Demand, type P1Demand } from './demand.js';
import { parseMeterTime } from './meter-time.js';
import { TelegramParseError, type ObisValue, type Telegram } from './telegram.js';
import { vendorOfFlag } from './vendors.js';

export interface P1Reading {
  /** The electricity metrics; empty when the telegram has none (a heat interface unit). */
  readonly metrics: readonly Metric[];
  /** The meter's clock (0-0:1.0.0) in UTC ms; null for DSMR 2.2/3.0 and mode D, which send none. */
  readonly meterTimeMs: number | null;
  /** The Belgian capacity-tariff objects (demand.ts), not metrics of the measurement; null when the telegram has none. */
  readonly demand?: P1Demand | null;
}

export interface P1Identity {
  /** Manufacturer name for registered flags (vendors.ts), else the flag itself. */
  readonly vendor: string;
  readonly model: string;
  /** Equipment identifier (0-0:96.1.1, 0-0:96.1.0, ...; hex-encoded ASCII decoded), null when absent. */
  readonly meterId: string | null;
  /** `5.0`, `4.2` from 1-3:0.2.8; `BE 50217` from the Belgian 0-0:96.1.4; null for DSMR 2.2/3.0 and mode D. */
  readonly dsmrVersion: string | null;
  /** `DSMR 5.0`, or a mode D meter's firmware (1-0:0.2.0), else null. */
  readonly firmware: string | null;
  /** `DSMR` or `IEC 62056-21 mode D`, as scan and the status page name the telegram. */
  readonly layout: string;
}

/** Where the equipment id is, in the order tried: DSMR 3+, E.ON Hungary / DSMR 2.2 M-Bus style, EDL21/eBZ, EasyMeter, the IEC 62056-21 serial number. */
const METER_ID_OBJECTS = ['0-0:96.1.1', '0-0:96.1.0', '1-0:96.1.0', '0-0:96.1.255', '1-0:0.0.0', '0-0:C.1.0', '1-0:C.1.0'];

/** Factors to the contract's units. */
const TO_W: Readonly<Record<string, number>> = { kW: 1000, W: 1 };
const TO_WH: Readonly<Record<string, number>> = { kWh: 1000, Wh: 1 };

/** Net active power (delivered minus received) from the DSMR pair, else the first signed object found. */
interface PowerSource {
  readonly name: string;
  readonly delivered: string;
  readonly received: string;
  readonly signed: readonly string[];
}

const POWERS: readonly PowerSource[] = [
  { name: 'total_active_power', delivered: '1-0:1.7.0', received: '1-0:2.7.0', signed: ['1-0:1.7.255', '1-0:16.7.0'] },
  { name: 'active_power_l1', delivered: '1-0:21.7.0', received: '1-0:22.7.0', signed: ['1-0:21.7.255', '1-0:36.7.0'] },
  { name: 'active_power_l2', delivered: '1-0:41.7.0', received: '1-0:42.7.0', signed: ['1-0:41.7.255', '1-0:56.7.0'] },
  { name: 'active_power_l3', delivered: '1-0:61.7.0', received: '1-0:62.7.0', signed: ['1-0:61.7.255', '1-0:76.7.0'] },
];

const PHASES: ReadonlyArray<readonly [string, string, string]> = [
  ['voltage_l1', '1-0:32.7.0', 'V'],
  ['voltage_l2', '1-0:52.7.0', 'V'],
  ['voltage_l3', '1-0:72.7.0', 'V'],
  ['current_l1', '1-0:31.7.0', 'A'],
  ['current_l2', '1-0:51.7.0', 'A'],
  ['current_l3', '1-0:71.7.0', 'A'],
];

export function p1Reading(telegram: Telegram): P1Reading {
  const metrics: Metric[] = [];
  for (const power of POWERS) {
    const value = netPower(telegram, power);
    if (value !== null) metrics.push({ name: power.name, value, unit: 'W' });
  }
  const imported = energy(telegram, '1-0:1.8');
  if (imported !== null) metrics.push({ name: 'active_energy_import', value: imported, unit: 'Wh' });
  const exported = energy(telegram, '1-0:2.8');
  if (exported !== null) metrics.push({ name: 'active_energy_export', value: exported, unit: 'Wh' });
  for (const [name, obis, unit] of PHASES) {
    const v = quantity(telegram, obis, { [unit]: 1 });
    if (v !== null) metrics.push({ name, value: v, unit });
  }
  const time = telegram.objects.get('0-0:1.0.0')?.[0];
  return { metrics, meterTimeMs: time ? parseMeterTime(time.raw) : null, demand: p1Demand(telegram) };
}

/** Whether a reading carries power or energy: a telegram without (a heat interface unit) gives no electricity sample. */
export function hasElectricity(reading: P1Reading): boolean {
  return reading.metrics.some((m) => m.name === 'total_active_power' || m.name.startsWith('active_energy_'));
}

export function p1Identity(telegram: Telegram): P1Identity {
  const version = telegram.objects.get('1-3:0.2.8')?.[0]?.raw;
  const belgian = telegram.objects.get('0-0:96.1.4')?.[0]?.raw;
  const idText = METER_ID_OBJECTS.map((obis) => telegram.objects.get(obis)?.[0]?.raw)
    .map((raw) => (raw === undefined ? '' : decodeEquipmentId(raw)))
    .find((id) => id !== '');
  const dsmrVersion = version && /^\d{2}$/.test(version) ? `${version[0]}.${version[1]}` : belgian ? `BE ${belgian}` : null;
  const modeD = telegram.layout === 'iec62056-21';
  const firmware = dsmrVersion ? `DSMR ${dsmrVersion}` : (telegram.objects.get('1-0:0.2.0')?.[0]?.raw.trim() || null);
  return {
    vendor: vendorOfFlag(telegram.manufacturerFlag),
    model: telegram.model,
    meterId: idText ?? null,
    dsmrVersion,
    firmware,
    layout: modeD ? 'IEC 62056-21 mode D' : 'DSMR',
  };
}

/** DSMR 3+ send the equipment id as hex-encoded ASCII; DSMR 2.2 and mode D meters as plain text. Control bytes are dropped. */
export function decodeEquipmentId(raw: string): string {
  if (raw.length % 2 === 0 && /^[0-9A-Fa-f]+$/.test(raw)) {
    // Control bytes only at either end (a padding byte); inside, the digits were plain text.
    const text = Buffer.from(raw, 'hex').toString('latin1').replace(/^[\x00-\x1f\x7f]+|[\x00-\x1f\x7f]+$/g, '');
    if (text.length >= 4 && /^[\x20-\x7e]+$/.test(text)) return text.trim();
  }
  return raw.replace(/[\x00-\x1f\x7f]/g, '').trim();
}

function netPower(telegram: Telegram, p: PowerSource): number | null {
  const delivered = quantity(telegram, p.delivered, TO_W);
  if (delivered !== null) return round3(delivered - (quantity(telegram, p.received, TO_W) ?? 0));
  for (const obis of p.signed) {
    const v = quantity(telegram, obis, TO_W);
    if (v !== null) return v;
  }
  return null;
}

/** The tariff registers summed (x.8.1 + x.8.2), else the total (x.8.0), in Wh. */
function energy(telegram: Telegram, prefix: string): number | null {
  const t1 = quantity(telegram, `${prefix}.1`, TO_WH);
  const t2 = quantity(telegram, `${prefix}.2`, TO_WH);
  if (t1 !== null || t2 !== null) return round3((t1 ?? 0) + (t2 ?? 0));
  return quantity(telegram, `${prefix}.0`, TO_WH);
}

/** One object's value in the contract's unit; a value or unit the meter garbled is an error, never half-used. */
function quantity(telegram: Telegram, obis: string, factors: Readonly<Record<string, number>>): number | null {
  const value: ObisValue | undefined = telegram.objects.get(obis)?.[0];
  if (!value) return null;
  const factor = value.unit === null ? undefined : factors[value.unit];
  if (factor === undefined) throw new TelegramParseError(`${obis}: unexpected unit ${JSON.stringify(value.unit)}`);
  // A sign either way: mode D meters send `-2.41`, an Itron EM214 in mode C `+000.8`.
  if (!/^[-+]?\d+(\.\d+)?$/.test(value.raw)) throw new TelegramParseError(`${obis}: not a number: ${JSON.stringify(value.raw)}`);
  return round3(Number(value.raw) * factor);
}

/** Meter values have at most 3 decimals; drop binary noise from the scaling. */
export function round3(v: number): number {
  return Math.round(v * 1000) / 1000;
}
