// Maps a parsed P1 telegram to the contract's metric names and units, and reads what
// identifies the meter. Pure.
//   total_active_power W    = (1-0:1.7.0 − 1-0:2.7.0), delivered minus received, in W
//   active_energy_import Wh = 1-0:1.8.1 + 1-0:1.8.2 (1-0:1.8.0 where the tariffs are absent)
//   active_energy_export Wh = 1-0:2.8.1 + 1-0:2.8.2 (1-0:2.8.0 likewise)
//   voltage_l1..l3 V from 1-0:32/52/72.7.0, current_l1..l3 A from 1-0:31/51/71.7.0 where present
import type { Metric } from '../domain.js';
import { parseMeterTime } from './meter-time.js';
import { TelegramParseError, type ObisValue, type Telegram } from './telegram.js';

export interface P1Reading {
  readonly metrics: readonly Metric[];
  /** The meter's clock (0-0:1.0.0) in UTC ms; null for DSMR 2.2/3.0, which send none. */
  readonly meterTimeMs: number | null;
}

export interface P1Identity {
  /** Manufacturer name for known flags, else the flag itself. */
  readonly vendor: string;
  readonly model: string;
  /** Equipment identifier (0-0:96.1.1, hex-encoded ASCII on DSMR 3+), null when absent. */
  readonly meterId: string | null;
  /** `5.0`, `4.2` from 1-3:0.2.8; `BE 50217` from the Belgian 0-0:96.1.4; null for DSMR 2.2/3.0. */
  readonly dsmrVersion: string | null;
}

/** IEC 62056-21 manufacturer flags seen on P1 ports (the flag is case-insensitive). */
const MANUFACTURERS: Readonly<Record<string, string>> = {
  ISK: 'Iskraemeco',
  KFM: 'Kaifa',
  KMP: 'Kamstrup',
  LGZ: 'Landis+Gyr',
  XMX: 'Xemex',
};

/** Factors to the contract's units. */
const TO_W: Readonly<Record<string, number>> = { kW: 1000, W: 1 };
const TO_WH: Readonly<Record<string, number>> = { kWh: 1000, Wh: 1 };

export function p1Reading(telegram: Telegram): P1Reading {
  const metrics: Metric[] = [];
  const delivered = quantity(telegram, '1-0:1.7.0', TO_W);
  if (delivered !== null) {
    const received = quantity(telegram, '1-0:2.7.0', TO_W) ?? 0;
    metrics.push({ name: 'total_active_power', value: round3(delivered - received), unit: 'W' });
  }
  const imported = energy(telegram, '1-0:1.8');
  if (imported !== null) metrics.push({ name: 'active_energy_import', value: imported, unit: 'Wh' });
  const exported = energy(telegram, '1-0:2.8');
  if (exported !== null) metrics.push({ name: 'active_energy_export', value: exported, unit: 'Wh' });
  const phases: Array<[string, string, string]> = [
    ['voltage_l1', '1-0:32.7.0', 'V'],
    ['voltage_l2', '1-0:52.7.0', 'V'],
    ['voltage_l3', '1-0:72.7.0', 'V'],
    ['current_l1', '1-0:31.7.0', 'A'],
    ['current_l2', '1-0:51.7.0', 'A'],
    ['current_l3', '1-0:71.7.0', 'A'],
  ];
  for (const [name, obis, unit] of phases) {
    const v = quantity(telegram, obis, { [unit]: 1 });
    if (v !== null) metrics.push({ name, value: v, unit });
  }
  if (metrics.length === 0) throw new TelegramParseError('telegram carries no power or energy');
  const time = telegram.objects.get('0-0:1.0.0')?.[0];
  return { metrics, meterTimeMs: time ? parseMeterTime(time.raw) : null };
}

export function p1Identity(telegram: Telegram): P1Identity {
  const flag = telegram.manufacturerFlag;
  const version = telegram.objects.get('1-3:0.2.8')?.[0]?.raw;
  const belgian = telegram.objects.get('0-0:96.1.4')?.[0]?.raw;
  const id = telegram.objects.get('0-0:96.1.1')?.[0]?.raw;
  return {
    vendor: MANUFACTURERS[flag.toUpperCase()] ?? flag,
    model: telegram.model,
    meterId: id ? decodeEquipmentId(id) : null,
    dsmrVersion: version && /^\d{2}$/.test(version) ? `${version[0]}.${version[1]}` : belgian ? `BE ${belgian}` : null,
  };
}

/** DSMR 3+ send the equipment id as hex-encoded ASCII; DSMR 2.2 as plain digits. */
function decodeEquipmentId(raw: string): string {
  if (raw.length % 2 === 0 && /^[0-9A-Fa-f]+$/.test(raw)) {
    const text = Buffer.from(raw, 'hex').toString('latin1');
    if (/^[\x20-\x7e]+$/.test(text)) return text;
  }
  return raw;
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
  if (!/^-?\d+(\.\d+)?$/.test(value.raw)) throw new TelegramParseError(`${obis}: not a number: ${JSON.stringify(value.raw)}`);
  return round3(Number(value.raw) * factor);
}

/** Meter values have at most 3 decimals; drop binary noise from the scaling. */
function round3(v: number): number {
  return Math.round(v * 1000) / 1000;
}
