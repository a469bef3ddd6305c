// The market registry: data in markets.json, typed lookups here.
import { readFileSync } from 'node:fs';
import { localDayStartMs } from './timezone.js';
import { requireSupportedTimeZone } from './zone-offset.js';

interface EicEntryJson {
  from: string | null;
  code: string;
  zone?: string;
}
interface MarketJson {
  code: string;
  name: string;
  time_zone: string;
  currency: string;
  eic: EicEntryJson[];
  resolution_s: Array<{ from: string | null; seconds: number }>;
  entsoe_sequence?: Array<{ from: string | null; position: number }>;
  until?: string;
  exogenous_neighbours?: string[];
}

/** A value that holds from a local delivery date on (`fromMs` = UTC start of that local day). */
export interface Dated<T> {
  /** Local delivery date the value holds from; null = from the beginning. */
  readonly fromDate: string | null;
  readonly fromMs: number;
  readonly value: T;
}

export interface Market {
  /** Our code, as users and the HTTP API write it: `NL`, `DE-LU`. */
  readonly code: string;
  readonly name: string;
  /** IANA time zone of the market's delivery days. */
  readonly timeZone: string;
  readonly currency: string;
  /** ENTSO-E area codes over time (DE-LU was part of DE-AT-LU before 2018-10-01). */
  readonly eic: readonly Dated<{ code: string; zone?: string }>[];
  /** Native day-ahead period length over time, seconds. */
  readonly resolutionS: readonly Dated<number>[];
  /** First local delivery date the market no longer exists (DE-AT-LU), if any. */
  readonly untilDate?: string;
  /**
   * ENTSO-E classificationSequence position of the SDAC price, where the platform also
   * publishes another auction for the zone (EXAA in DE-LU and AT); absent = one series.
   */
  readonly entsoeSequence?: readonly Dated<number>[];
  /**
   * Coupled neighbour zones whose day-ahead load, solar and wind forecasts the forecaster
   * also reads for this market (a small zone's price follows its neighbours' renewables);
   * the exogenous sync fetches them with the market's own.
   */
  readonly exogenousNeighbours?: readonly string[];
}

function dated<T>(timeZone: string, from: string | null, value: T): Dated<T> {
  // fromMs is computed on first read: loading the registry does no calendar work a
  // daemon that never prices does not need.
  let fromMs: number | undefined;
  return {
    fromDate: from,
    get fromMs() {
      return (fromMs ??= from === null ? Number.NEGATIVE_INFINITY : localDayStartMs(timeZone, from));
    },
    value,
  };
}

function load(): Market[] {
  const doc = JSON.parse(readFileSync(new URL('./markets.json', import.meta.url), 'utf8')) as { markets: MarketJson[] };
  // A zone whose offsets zone-offset.ts cannot compute exactly is refused here, at start.
  for (const m of doc.markets) requireSupportedTimeZone(m.time_zone, `market ${m.code}: time_zone`);
  return doc.markets.map((m) =>
    Object.freeze({
      code: m.code,
      name: m.name,
      timeZone: m.time_zone,
      currency: m.currency,
      eic: m.eic.map((e) => dated(m.time_zone, e.from, e.zone ? { code: e.code, zone: e.zone } : { code: e.code })),
      resolutionS: m.resolution_s.map((r) => dated(m.time_zone, r.from, r.seconds)),
      ...(m.until ? { untilDate: m.until } : {}),
      ...(m.entsoe_sequence ? { entsoeSequence: m.entsoe_sequence.map((e) => dated(m.time_zone, e.from, e.position)) } : {}),
      ...(m.exogenous_neighbours ? { exogenousNeighbours: Object.freeze([...m.exogenous_neighbours]) } : {}),
    }),
  );
}

export const MARKETS: readonly Market[] = Object.freeze(load());
const byCode = new Map(MARKETS.map((m) => [m.code.toUpperCase(), m]));
for (const m of MARKETS)
  for (const n of m.exogenousNeighbours ?? []) if (!byCode.has(n.toUpperCase()) || n === m.code) throw new Error(`markets.json: ${m.code}'s exogenous neighbour "${n}" is not another market area of the registry`);

/** The market with this code (case-insensitive), or undefined. */
export function marketByCode(code: string): Market | undefined {
  return byCode.get(code.trim().toUpperCase());
}

/** Like marketByCode, but throws a clear error listing the known codes. */
export function requireMarket(code: string): Market {
  const m = marketByCode(code);
  if (!m) throw new RangeError(`unknown market area "${code}" (known: ${MARKETS.map((x) => x.code).join(', ')})`);
  return m;
}

/** The regions and their exogenous neighbours (registry), each once: the market areas whose exogenous series are synced. */
export function withExogenousNeighbours(regions: readonly string[]): string[] {
  const out: string[] = [];
  for (const r of regions) {
    const m = requireMarket(r);
    for (const code of [m.code, ...(m.exogenousNeighbours ?? [])]) if (!out.includes(code)) out.push(code);
  }
  return out;
}

function valueAt<T>(history: readonly Dated<T>[], atMs: number): T {
  let value = history[0].value;
  for (const h of history) if (h.fromMs <= atMs) value = h.value;
  return value;
}

/** Native day-ahead period length (s) for the delivery period starting at `atMs`. */
export function nativeResolutionS(market: Market, atMs: number): number {
  return valueAt(market.resolutionS, atMs);
}

/** The classificationSequence position carrying the SDAC price at `atMs`, if the market has several. */
export function entsoeSequenceAt(market: Market, atMs: number): number | undefined {
  return market.entsoeSequence ? valueAt(market.entsoeSequence, atMs) : undefined;
}

/** ENTSO-E area code to request for the delivery period starting at `atMs`. */
export function eicAt(market: Market, atMs: number): string {
  return valueAt(market.eic, atMs).code;
}

/** Instants inside [fromMs, toMs) where the market's EIC or resolution changes, sorted. */
export function registryBoundariesMs(market: Market, fromMs: number, toMs: number): number[] {
  const all = [...market.eic, ...market.resolutionS].map((d) => d.fromMs).filter((t) => t > fromMs && t < toMs);
  return [...new Set(all)].sort((a, b) => a - b);
}
