// The Belgian capacity-tariff objects of an e-MUCS P1 telegram (Fluvius digital meter), read
// as published, never used for the MQTT measurement (the contract's measurement carries
// metrics with a name, value and unit only, and its names do not cover these: they go to
// /metrics and the status page, docs/p1.md "Belgian capacity tariff objects"). Pure.
//   1-0:1.4.0(02.351*kW)                      the running quarter-hour's average demand (import)
//   1-0:1.6.0(200509134558S)(02.589*kW)       this month's peak so far, with when it was set
//   0-0:98.1.0(n)(1-0:1.6.0)(1-0:1.6.0)(closed)(at)(kW)...  the last n (up to 13) months' peaks,
//                                             each: when the meter closed the month (the next
//                                             month's first midnight), when its peak was, the peak
// A value or unit that is not what e-MUCS gives refuses the whole telegram (TelegramParseError),
// as for every other object: a garbled peak must not steer charging.
import { parseMeterTime } from './meter-time.js';
import { TelegramParseError, type ObisValue, type Telegram } from './telegram.js';

export interface MonthPeak {
  /** The billing month, YYYY-MM in Belgian time: the peak's month, else the month before the one it was closed in; null when neither is known. */
  readonly month: string | null;
  /** When the meter closed the month (its next month's first midnight, UTC ms); null on 1-0:1.6.0, the month under way. */
  readonly closedAtMs: number | null;
  /** When the peak quarter-hour was (meter time, UTC ms); null when the meter has none yet. */
  readonly atMs: number | null;
  readonly kw: number;
}

export interface P1Demand {
  /** 1-0:1.4.0: the running quarter-hour's average import demand, kW; null when absent. */
  readonly quarterHourAverageKw: number | null;
  /** 1-0:1.6.0: this month's highest quarter-hour so far; null when absent. */
  readonly monthPeak: MonthPeak | null;
  /** 0-0:98.1.0: earlier months' peaks in the meter's order (newest first on the meters seen); empty when absent. */
  readonly history: readonly MonthPeak[];
}

const KW: Readonly<Record<string, number>> = { kW: 1, W: 0.001 };

/** The capacity objects of a telegram; null when it carries none of them (not a Belgian meter). */
export function p1Demand(telegram: Telegram): P1Demand | null {
  const average = telegram.objects.get('1-0:1.4.0');
  const peak = telegram.objects.get('1-0:1.6.0');
  const history = telegram.objects.get('0-0:98.1.0');
  if (!average && !peak && !history) return null;
  return {
    quarterHourAverageKw: average ? kw('1-0:1.4.0', average[0]) : null,
    monthPeak: peak ? monthPeak('1-0:1.6.0', null, peak[0], peak[1]) : null,
    history: history ? peakHistory(history) : [],
  };
}

function monthPeak(obis: string, closed: ObisValue | null, at: ObisValue | undefined, value: ObisValue | undefined): MonthPeak {
  if (!at || !value) throw new TelegramParseError(`${obis}: expected (time)(kW)`);
  const closedAtMs = closed ? time(obis, closed) : null;
  const atMs = time(obis, at);
  // The month's last instant is just before it was closed.
  const month = atMs !== null ? belgianMonth(atMs) : closedAtMs !== null ? belgianMonth(closedAtMs - 1) : null;
  return { month, closedAtMs, atMs, kw: kw(obis, value) };
}

const BRUSSELS_MONTH = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Brussels', year: 'numeric', month: '2-digit' });

/** YYYY-MM of an instant in Belgian time. */
export function belgianMonth(ms: number): string {
  const parts = Object.fromEntries(BRUSSELS_MONTH.formatToParts(new Date(ms)).map((p) => [p.type, p.value]));
  return `${parts.year}-${parts.month}`;
}

/** `(n)(1-0:1.6.0)(1-0:1.6.0)` then n times `(month start)(peak time)(kW)`. */
function peakHistory(values: readonly ObisValue[]): MonthPeak[] {
  const obis = '0-0:98.1.0';
  const count = values[0]?.raw;
  if (count === undefined || !/^\d{1,2}$/.test(count)) throw new TelegramParseError(`${obis}: not a count: ${JSON.stringify(count)}`);
  const n = Number(count);
  // Meters with no history yet send `(0)` alone, or the count and the two object ids.
  const head = n === 0 && values.length === 1 ? 1 : 3;
  if (values.length !== head + 3 * n) throw new TelegramParseError(`${obis}: ${n} months announced, ${values.length - head} values found`);
  const peaks: MonthPeak[] = [];
  for (let i = 0; i < n; i++) {
    const at = head + 3 * i;
    peaks.push(monthPeak(obis, values[at]!, values[at + 1], values[at + 2]));
  }
  return peaks;
}

/** A meter time; the all-zero time some meters send for a month without a peak is null. */
function time(obis: string, v: ObisValue): number | null {
  if (/^0{12}[SW]?$/.test(v.raw)) return null;
  const ms = parseMeterTime(v.raw);
  if (ms === null) throw new TelegramParseError(`${obis}: not a meter time: ${JSON.stringify(v.raw)}`);
  return ms;
}

function kw(obis: string, v: ObisValue | undefined): number {
  if (!v) throw new TelegramParseError(`${obis}: no value`);
  const factor = v.unit === null ? undefined : KW[v.unit];
  if (factor === undefined) throw new TelegramParseError(`${obis}: unexpected unit ${JSON.stringify(v.unit)}`);
  if (!/^\d+(\.\d+)?$/.test(v.raw)) throw new TelegramParseError(`${obis}: not a number: ${JSON.stringify(v.raw)}`);
  return Math.round(Number(v.raw) * factor * 1000) / 1000;
}
