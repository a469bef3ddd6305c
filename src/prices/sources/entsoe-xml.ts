// Pure decoding of ENTSO-E Transparency Platform day-ahead price documents (A44).
//
// Published layout: Publication_MarketDocument > TimeSeries (one per day and
// classificationSequence) > Period (timeInterval start/end in UTC, resolution
// PT60M/PT15M/PT30M) > Point (position, price.amount). Curve type A01 lists every
// position; A03 leaves out a position whose price repeats the previous one, also at
// the end of a period. Namespaces vary (:7:0, :7:3, with or without prefix), so only
// element local names are matched. "No data" comes as an Acknowledgement_MarketDocument.
//
// Choosing between series: a document can carry the same days twice (DE-LU: a PT60M
// series under classificationSequence position 1 and a PT15M series under position 2;
// the platform has moved the official SDAC price between positions). Series are never
// merged. A TimeSeries whose currency_Unit.name is not the market's currency (registry)
// fails the whole document. For each delivery period (same timeInterval):
//   1. where the registry names the SDAC position for the market (DE-LU, AT: 1; position
//      2 is EXAA's separate auction, published hours before SDAC), only series at that
//      position (or without a position) qualify; if none does, the period is skipped
//      ("not yet"), never filled from the other auction;
//   2. among those, a series whose resolution equals the market's native resolution at
//      that time (registry: 60 min before 2025-10-01, 15 min after) is preferred, then
//   3. the lowest classificationSequence position (absent counts as 1).
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import type { PricePeriod } from '../../domain.js';
import { entsoeSequenceAt, nativeResolutionS, type Market } from '../markets.js';

export class EntsoeDocumentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EntsoeDocumentError';
  }
}

export interface SeriesSummary {
  readonly startMs: number;
  readonly endMs: number;
  readonly resolutionS: number;
  readonly curveType: string;
  readonly sequence: number | null;
  readonly points: number;
  readonly chosen: boolean;
}

export type A44Result =
  | {
      readonly kind: 'prices';
      readonly periods: PricePeriod[];
      readonly series: readonly SeriesSummary[];
      /** Every TimeSeries' currency_Unit.name is the market's (a document in another one is refused). */
      readonly currency: string;
      /** Delivery periods left out because no series had the market's SDAC position. */
      readonly skipped: ReadonlyArray<{ startMs: number; endMs: number; reason: string }>;
    }
  | { readonly kind: 'no-data'; readonly reason: string };

const ARRAY_TAGS = new Set(['TimeSeries', 'Period', 'Point', 'Reason']);
export const entsoeXmlParser = new XMLParser({
  removeNSPrefix: true,
  ignoreAttributes: true,
  parseTagValue: false,
  trimValues: true,
  isArray: (name) => ARRAY_TAGS.has(name),
});

export type Node = Record<string, unknown>;

export function text(node: Node, key: string): string | undefined {
  const v = node[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'object') return undefined;
  return String(v);
}

function required(node: Node, key: string, where: string): string {
  const v = text(node, key);
  if (v === undefined || v === '') throw new EntsoeDocumentError(`${where}: missing <${key}>`);
  return v;
}

/** `2020-12-31T23:00Z` (the platform omits seconds) -> ms. */
export function parseEntsoeTime(s: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?Z$/.exec(s.trim());
  if (!m) throw new EntsoeDocumentError(`time "${s}" is not yyyy-MM-ddTHH:mm[:ss]Z`);
  return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6] ?? 0));
}

/** ISO 8601 durations used by the platform: PT15M, PT30M, PT60M, PT1H, P1D. */
export function parseResolutionS(s: string): number {
  const m = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?)?$/.exec(s.trim());
  const seconds = m ? Number(m[1] ?? 0) * 86400 + Number(m[2] ?? 0) * 3600 + Number(m[3] ?? 0) * 60 : 0;
  if (!m || seconds <= 0) throw new EntsoeDocumentError(`resolution "${s}" is not an ISO 8601 duration like PT15M`);
  return seconds;
}

export interface Candidate {
  startMs: number;
  endMs: number;
  resolutionS: number;
  curveType: string;
  sequence: number | null;
  order: number;
  prices: Array<{ startMs: number; price: number }>;
  points: number;
}

/**
 * One Period at its resolution: A03 left-out positions repeat the previous value, A01
 * left-out positions are gaps. `valueKey` is the Point's value element (`price.amount`
 * in A44, `quantity` in load and generation documents).
 */
export function decodePeriod(period: Node, curveType: string, where: string, valueKey = 'price.amount'): Omit<Candidate, 'sequence' | 'order'> {
  const interval = period.timeInterval as Node | undefined;
  if (!interval || typeof interval !== 'object') throw new EntsoeDocumentError(`${where}: missing <timeInterval>`);
  const startMs = parseEntsoeTime(required(interval, 'start', where));
  const endMs = parseEntsoeTime(required(interval, 'end', where));
  const resolutionS = parseResolutionS(required(period, 'resolution', where));
  const stepMs = resolutionS * 1000;
  const slots = (endMs - startMs) / stepMs;
  if (!Number.isInteger(slots) || slots <= 0) throw new EntsoeDocumentError(`${where}: interval ${new Date(startMs).toISOString()}..${new Date(endMs).toISOString()} is not a whole number of ${resolutionS}-s periods`);
  const byPosition = new Map<number, number>();
  for (const point of (period.Point as Node[] | undefined) ?? []) {
    const position = Number(required(point, 'position', where));
    const raw = required(point, valueKey, `${where} position ${position}`);
    const price = Number(raw);
    if (!Number.isInteger(position) || position < 1 || position > slots) throw new EntsoeDocumentError(`${where}: position ${position} outside 1..${slots}`);
    if (!Number.isFinite(price)) throw new EntsoeDocumentError(`${where} position ${position}: ${valueKey} "${raw}" is not a number`);
    byPosition.set(position, price);
  }
  const prices: Array<{ startMs: number; price: number }> = [];
  let last: number | undefined;
  for (let pos = 1; pos <= slots; pos++) {
    const p = byPosition.get(pos);
    if (p !== undefined) last = p;
    // A03: a left-out position repeats the previous price (through the end of the period).
    // A01 lists every position, so one left out is a gap, not a repeat.
    const price = p ?? (curveType === 'A03' ? last : undefined);
    if (price !== undefined) prices.push({ startMs: startMs + (pos - 1) * stepMs, price });
  }
  return { startMs, endMs, resolutionS, curveType, prices, points: byPosition.size };
}

/** Parses a response body (any document type); throws EntsoeDocumentError on malformed or truncated XML. */
export function parseEntsoeXml(xml: string): Node {
  const valid = XMLValidator.validate(xml);
  if (valid !== true) throw new EntsoeDocumentError(`not well-formed XML (line ${valid.err.line}: ${valid.err.msg})`);
  return entsoeXmlParser.parse(xml) as Node;
}

/** An Acknowledgement_MarketDocument: "no matching data" is returned, any other reason thrown; undefined for a data document. */
export function acknowledgement(doc: Node): { readonly kind: 'no-data'; readonly reason: string } | undefined {
  const ack = doc.Acknowledgement_MarketDocument as Node | undefined;
  if (!ack) return undefined;
  const reasons = ((ack.Reason as Node[] | undefined) ?? []).map((r) => `${text(r, 'code') ?? '?'}: ${text(r, 'text') ?? ''}`.trim());
  const reason = reasons.join('; ') || 'acknowledgement without reason';
  if (/no matching data/i.test(reason)) return { kind: 'no-data', reason };
  throw new EntsoeDocumentError(`platform refused the request: ${reason}`);
}

/** The document's `name` root element; throws EntsoeDocumentError naming the roots found if it is missing. */
export function marketDocument(doc: Node, name: string): Node {
  const root = doc[name] as Node | undefined;
  if (!root || typeof root !== 'object') throw new EntsoeDocumentError(`neither ${name} nor Acknowledgement_MarketDocument (root: ${Object.keys(doc).filter((k) => k !== '?xml').join(', ') || 'none'})`);
  return root;
}

/** Decodes an A44 response body. Throws EntsoeDocumentError on malformed or truncated XML. */
export function parseA44(xml: string, market: Market): A44Result {
  const doc = parseEntsoeXml(xml);
  const noData = acknowledgement(doc);
  if (noData) return noData;
  const pub = marketDocument(doc, 'Publication_MarketDocument');

  const candidates: Candidate[] = [];
  const currency = market.currency;
  let order = 0;
  ((pub.TimeSeries as Node[] | undefined) ?? []).forEach((ts, i) => {
    const where = `TimeSeries ${i + 1}`;
    const unit = text(ts, 'price_Measure_Unit.name');
    if (unit && unit.toUpperCase() !== 'MWH') throw new EntsoeDocumentError(`${where}: price unit ${unit}, expected MWH`);
    // The registry's currency is what every stored price of the market is in; a document in
    // another currency would be stored as if it were that one, so it is refused.
    const docCurrency = text(ts, 'currency_Unit.name');
    if (docCurrency !== undefined && docCurrency.toUpperCase() !== market.currency.toUpperCase()) {
      throw new EntsoeDocumentError(`${where}: prices in ${docCurrency}, but ${market.code}'s day-ahead prices are in ${market.currency} (src/prices/markets.json); document refused, nothing stored`);
    }
    const curveType = text(ts, 'curveType') ?? 'A01';
    if (curveType !== 'A01' && curveType !== 'A03') throw new EntsoeDocumentError(`${where}: curve type ${curveType} is neither A01 nor A03`);
    const seqRaw = text(ts, 'classificationSequence_AttributeInstanceComponent.position');
    const sequence = seqRaw === undefined ? null : Number(seqRaw);
    ((ts.Period as Node[] | undefined) ?? []).forEach((period, k) => {
      candidates.push({ ...decodePeriod(period, curveType, `${where} Period ${k + 1}`), sequence, order: order++ });
    });
  });

  // Group by delivery interval; choose one series per group (see the rule above).
  const groups = new Map<string, Candidate[]>();
  for (const c of candidates) {
    const key = `${c.startMs}/${c.endMs}`;
    const g = groups.get(key);
    if (g) g.push(c);
    else groups.set(key, [c]);
  }
  const chosen = new Set<Candidate>();
  const skipped: Array<{ startMs: number; endMs: number; reason: string }> = [];
  for (const all of groups.values()) {
    const sdac = entsoeSequenceAt(market, all[0].startMs);
    const group = sdac === undefined ? all : all.filter((c) => c.sequence === null || c.sequence === sdac);
    if (group.length === 0) {
      skipped.push({ startMs: all[0].startMs, endMs: all[0].endMs, reason: `only classificationSequence ${[...new Set(all.map((c) => c.sequence))].join(', ')}; the SDAC price of ${market.code} is at ${sdac}` });
      continue;
    }
    const native = nativeResolutionS(market, group[0].startMs);
    const best = [...group].sort(
      (a, b) => Number(b.resolutionS === native) - Number(a.resolutionS === native) || (a.sequence ?? 1) - (b.sequence ?? 1) || a.order - b.order,
    )[0];
    chosen.add(best);
  }
  const periods: PricePeriod[] = [];
  let coveredTo = Number.NEGATIVE_INFINITY;
  for (const c of [...chosen].sort((a, b) => a.startMs - b.startMs)) {
    if (c.startMs < coveredTo) continue; // an overlapping interval of another series: never merge
    for (const p of c.prices) periods.push({ marketArea: market.code, startMs: p.startMs, durationS: c.resolutionS, pricePerMwh: p.price });
    coveredTo = c.endMs;
  }
  const series = candidates.map((c) => ({ startMs: c.startMs, endMs: c.endMs, resolutionS: c.resolutionS, curveType: c.curveType, sequence: c.sequence, points: c.points, chosen: chosen.has(c) }));
  return { kind: 'prices', periods, series, currency, skipped };
}
