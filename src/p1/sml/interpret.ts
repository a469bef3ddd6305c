// One whole SML file to what the gateway does with it (pure), like interpret.ts for text
// telegrams: the value list becomes the same OBIS objects a text telegram gives (value ×
// 10^scaler as exact decimal text, the DLMS unit as its symbol), so measurements.ts maps both
// to the same metric names and units. Only current values (OBIS F = 255) are read.
import type { TelegramOutcome } from '../interpret.js';
import { hasElectricity, p1Reading, type P1Identity } from '../measurements.js';
import type { ObisValue, Telegram } from '../telegram.js';
import { TelegramParseError } from '../telegram.js';
import { vendorOfFlag } from '../vendors.js';
import { smlLists, type SmlEntry, type SmlList } from './messages.js';
import { SmlDecodeError } from './tl.js';

/** DLMS unit codes (IEC 62056-62) of the quantities published, as the text telegrams write them. */
const UNITS: Readonly<Record<number, string>> = { 27: 'W', 30: 'Wh', 33: 'A', 35: 'V' };

/** Where the meter's id is, in the order tried: the device id (1-0:0.0.9), 1-0:96.1.0, the meter number 1-0:0.0.0. */
const METER_ID_OBIS = ['1-0:0.0.9*255', '1-0:96.1.0*255', '1-0:0.0.0*255'];
const MANUFACTURER_OBIS = '129-129:199.130.3*255';

export function interpretSmlFile(data: Buffer): TelegramOutcome {
  let lists: SmlList[];
  try {
    lists = smlLists(data);
  } catch (err) {
    if (!(err instanceof SmlDecodeError)) throw err;
    return { kind: 'unknown_layout', error: `SML: ${err.message}` };
  }
  const list = lists.find((l) => l.entries.length > 0);
  if (!list) return { kind: 'unknown_layout', error: 'SML file without a value list (SML_GetList.Res)' };
  const byObis = new Map(list.entries.map((e) => [e.obis, e]));
  const identity = smlIdentity(byObis, list.serverId);
  const telegram: Telegram = {
    identification: `${identity.vendor} SML`,
    manufacturerFlag: flagOf(byObis, list.serverId) ?? '',
    model: identity.model,
    objects: new Map(list.entries.filter((e) => e.obis.endsWith('*255')).map((e) => [e.obis.slice(0, -4), [objectValue(e)]])),
    layout: 'sml',
  };
  try {
    const reading = p1Reading(telegram);
    return hasElectricity(reading) ? { kind: 'ok', telegram, reading, identity } : { kind: 'no_electricity', telegram, reading, identity };
  } catch (err) {
    if (!(err instanceof TelegramParseError)) throw err;
    return { kind: 'invalid', error: err.message };
  }
}

/** An entry as the text of a telegram object: exact decimal text, unit symbol (`dlms:N` for units not published). */
function objectValue(e: SmlEntry): ObisValue {
  const v = e.value;
  if (v.kind === 'number') return { raw: scaled(v.value, e.scaler), unit: e.unit === null ? null : (UNITS[e.unit] ?? `dlms:${e.unit}`) };
  if (v.kind === 'octets') return { raw: v.bytes.toString('hex').toUpperCase(), unit: null };
  return { raw: v.kind === 'boolean' ? String(v.value) : '', unit: null };
}

/** value × 10^scaler as exact decimal text (no binary rounding): 153385557, -1 → `15338555.7`. */
export function scaled(value: bigint, scaler: number): string {
  const sign = value < 0n ? '-' : '';
  const digits = (value < 0n ? -value : value).toString();
  if (scaler >= 0) return `${sign}${digits}${'0'.repeat(scaler)}`;
  const padded = digits.padStart(-scaler + 1, '0');
  return `${sign}${padded.slice(0, scaler)}.${padded.slice(scaler)}`;
}

function smlIdentity(byObis: ReadonlyMap<string, SmlEntry>, serverId: Buffer | null): P1Identity {
  const flag = flagOf(byObis, serverId);
  const idBytes = METER_ID_OBIS.map((o) => byObis.get(o)?.value).find((v) => v?.kind === 'octets' && v.bytes.length > 0);
  const id = idBytes?.kind === 'octets' ? idBytes.bytes : serverId;
  const firmware = byObis.get('1-0:0.2.0*255')?.value;
  return {
    vendor: flag ? vendorOfFlag(flag) : 'unknown',
    model: 'SML meter',
    meterId: id ? meterIdText(id) : null,
    dsmrVersion: null,
    firmware: firmware?.kind === 'octets' && isPrintable(firmware.bytes) ? firmware.bytes.toString('latin1').trim() : null,
    layout: 'SML',
  };
}

/** The FLAG id: from 129-129:199.130.3, else the server id's bytes 2-4 (DIN 43863-5). */
function flagOf(byObis: ReadonlyMap<string, SmlEntry>, serverId: Buffer | null): string | null {
  const m = byObis.get(MANUFACTURER_OBIS)?.value;
  if (m?.kind === 'octets' && /^[A-Za-z]{3}$/.test(m.bytes.toString('latin1'))) return m.bytes.toString('latin1');
  const fromId = serverId && serverId.length === 10 ? serverId.subarray(2, 5).toString('latin1') : '';
  return /^[A-Z]{3}$/.test(fromId) ? fromId : null;
}

/**
 * A server id as the meter's printed number: DIN 43863-5 (`1EMH0004321349`: medium, FLAG id,
 * production block, serial) for the 10-byte form `0x 0m FFF bb ssssssss`; printable text as
 * it is; anything else in hex.
 */
export function meterIdText(id: Buffer): string {
  if (id.length === 10 && id[1]! <= 9 && /^[A-Z]{3}$/.test(id.subarray(2, 5).toString('latin1'))) {
    return `${id[1]}${id.subarray(2, 5).toString('latin1')}${String(id[5]).padStart(2, '0')}${String(id.readUInt32BE(6)).padStart(8, '0')}`;
  }
  if (isPrintable(id)) return id.toString('latin1').trim();
  return id.toString('hex').toUpperCase();
}

function isPrintable(bytes: Buffer): boolean {
  return bytes.length > 0 && bytes.every((b) => b >= 0x20 && b < 0x7f);
}
