// The price the driver pays per kWh at an instant, from an operator's tariff (config
// `tariffs.<market>`): the day-ahead price times a multiplier plus the supplier's margin,
// plus a grid fee that is flat or set by time-of-day zones in the market's local time
// (weekdays and months, as German §14a module 3 and Belgian network tariffs are written).
// Pure: plain values in and out; local time comes from prices/timezone.ts (the EU rule over
// zones.json), so a DST day moves the zones' UTC edges by itself.
//
// Zone edges are on local quarter-hours (the config schema says so) and every market zone
// has a whole-hour UTC offset, so the grid fee is one number within each UTC quarter-hour:
// splitting time at quarter-hours where the fee changes is exact.
import type { GridFeeZoneConfig, TariffConfig, WeekdayName } from '../config/types.js';
import type { PricePeriod } from '../domain.js';
import { localDayStartMs, offsetMs } from '../prices/timezone.js';

const QUARTER_MS = 900_000;
const DAY_MINUTES = 1440;
const WEEKDAYS: readonly WeekdayName[] = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

export interface GridFeeZone {
  readonly name: string;
  readonly perKwh: number;
  /** Local minutes after midnight, [fromMinute, toMinute); toMinute 0 or 1440 is midnight at the day's end; toMinute <= fromMinute runs past midnight. */
  readonly fromMinute: number;
  readonly toMinute: number;
  /** Local weekdays, 0 = Sunday (Date.getUTCDay); null: every day. */
  readonly weekdays: ReadonlySet<number> | null;
  /** Local months 1-12; null: every month. */
  readonly months: ReadonlySet<number> | null;
}

export interface Tariff {
  /** IANA zone of the market (prices/markets.json); the zones are in its wall time. */
  readonly timeZone: string;
  /** In force from this instant (valid_from's local midnight) until the next tariff's. */
  readonly validFromMs: number;
  readonly dayAheadMultiplier: number;
  readonly supplierMarginPerKwh: number;
  /** The flat grid fee, or where no zone applies. */
  readonly gridFeePerKwh: number;
  readonly zones: readonly GridFeeZone[];
  readonly sessionFee: number;
  /** A fraction: 0.21 for 21 %. */
  readonly vatRate: number;
}

/** The zone name reported for time no zone covers (the flat grid_fee.per_kwh). */
export const BASE_GRID_FEE_ZONE = 'base';

const minuteOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

function zoneFromConfig(z: GridFeeZoneConfig): GridFeeZone {
  return {
    name: z.name,
    perKwh: z.per_kwh,
    fromMinute: minuteOf(z.from),
    toMinute: minuteOf(z.to),
    weekdays: z.days ? new Set(z.days.map((d) => WEEKDAYS.indexOf(d))) : null,
    months: z.months ? new Set(z.months) : null,
  };
}

/** The pure tariff of a market's (schema-checked) config entry. */
export function tariffFromConfig(config: TariffConfig, timeZone: string): Tariff {
  return {
    timeZone,
    validFromMs: localDayStartMs(timeZone, config.valid_from),
    dayAheadMultiplier: config.day_ahead_multiplier,
    supplierMarginPerKwh: config.supplier_margin_per_kwh,
    gridFeePerKwh: config.grid_fee.per_kwh,
    zones: config.grid_fee.zones.map(zoneFromConfig),
    sessionFee: config.session_fee,
    vatRate: config.vat_rate,
  };
}

function zoneApplies(zone: GridFeeZone, minute: number, weekday: number, month: number): boolean {
  if (zone.weekdays && !zone.weekdays.has(weekday)) return false;
  if (zone.months && !zone.months.has(month)) return false;
  const from = zone.fromMinute;
  // "00:00" as an end is midnight at the end of the day, like "24:00"; an end not after the start runs past midnight.
  const to = zone.toMinute === 0 ? DAY_MINUTES : zone.toMinute;
  return to > from ? minute >= from && minute < to : minute >= from || minute < to;
}

export interface GridFee {
  readonly perKwh: number;
  /** The zone's name, or BASE_GRID_FEE_ZONE. */
  readonly zone: string;
}

/** The grid fee at a UTC instant: the first zone that applies to its local weekday, month and time, else the flat fee. */
export function gridFeeAt(tariff: Tariff, utcMs: number): GridFee {
  if (tariff.zones.length === 0) return { perKwh: tariff.gridFeePerKwh, zone: BASE_GRID_FEE_ZONE };
  const local = new Date(utcMs + offsetMs(tariff.timeZone, utcMs));
  const minute = local.getUTCHours() * 60 + local.getUTCMinutes();
  const weekday = local.getUTCDay();
  const month = local.getUTCMonth() + 1;
  for (const zone of tariff.zones) {
    if (zoneApplies(zone, minute, weekday, month)) return { perKwh: zone.perKwh, zone: zone.name };
  }
  return { perKwh: tariff.gridFeePerKwh, zone: BASE_GRID_FEE_ZONE };
}

/** A stretch of time with one grid fee. */
export interface GridFeeSpan extends GridFee {
  readonly startMs: number;
  readonly endMs: number;
}

/** [startMs, endMs) cut where the grid fee changes (at UTC quarter-hours); one span without zones. */
export function gridFeeSpans(tariff: Tariff, startMs: number, endMs: number): GridFeeSpan[] {
  if (tariff.zones.length === 0) return [{ startMs, endMs, perKwh: tariff.gridFeePerKwh, zone: BASE_GRID_FEE_ZONE }];
  const spans: GridFeeSpan[] = [];
  let t = startMs;
  let fee = gridFeeAt(tariff, t);
  let spanStart = t;
  while (t < endMs) {
    const next = Math.min(endMs, (Math.floor(t / QUARTER_MS) + 1) * QUARTER_MS);
    if (next < endMs) {
      const nextFee = gridFeeAt(tariff, next);
      if (nextFee.zone !== fee.zone || nextFee.perKwh !== fee.perKwh) {
        spans.push({ startMs: spanStart, endMs: next, ...fee });
        spanStart = next;
        fee = nextFee;
      }
    }
    t = next;
  }
  spans.push({ startMs: spanStart, endMs, ...fee });
  return spans;
}

/** A day-ahead period cut where the grid fee changes: one price and one grid fee throughout. */
export interface TariffSegment extends GridFeeSpan {
  readonly dayAheadPerMwh: number;
}

/**
 * The periods overlapping [fromMs, toMs), each cut where the grid fee changes. `periods`
 * sorted by start; a period ends at its own length or at the next one's start (the rule
 * session-cost.ts prices by). Time without a period has no segment.
 */
export function tariffSegments(tariff: Tariff, periods: readonly PricePeriod[], fromMs: number, toMs: number): TariffSegment[] {
  const out: TariffSegment[] = [];
  for (let k = 0; k < periods.length; k++) {
    const p = periods[k];
    const own = p.startMs + p.durationS * 1000;
    const endMs = k + 1 < periods.length ? Math.min(own, periods[k + 1].startMs) : own;
    if (endMs <= fromMs || p.startMs >= toMs) continue;
    for (const span of gridFeeSpans(tariff, p.startMs, endMs)) out.push({ ...span, dayAheadPerMwh: p.pricePerMwh });
  }
  return out;
}
