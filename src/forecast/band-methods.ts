// Which quantiles the forecast's band comes from, per market, resolution, band coverage and
// horizon (issue 24 point 2): data in band-methods.json (the figures that justify each
// choice with it), checked against band-methods.schema.json once when first read; typed
// look-ups here. Anything not measured there gets the conformal band.
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { formatAjvError } from '../config/load.js';

/**
 * 'conformal': the split-conformal band with adaptive conformal inference (rolling.ts);
 * 'average': the mean of the isotonic distributional regression quantiles (idr.ts) and the
 * conformal ones at the band's levels.
 */
export type BandMethod = 'conformal' | 'average';

export interface MeasuredHorizon {
  readonly horizon: number;
  readonly method: BandMethod;
  /** CRPS (EUR/MWh) and the band's coverage (%) of each method, from `evaluation`. */
  readonly crps: { readonly conformal: number; readonly average: number };
  readonly coverage_pct: { readonly conformal: number; readonly average: number };
}

export interface BandMethodTable {
  readonly rule: { readonly coverage_min_pct: number; readonly coverage_max_pct: number };
  readonly measured: readonly {
    readonly market: string;
    readonly interval_s: 900 | 3600;
    readonly coverage: number;
    readonly evaluation: string;
    readonly source: string;
    readonly horizons: readonly MeasuredHorizon[];
  }[];
}

/** A table that is not valid data: the schema's problems, or a method its own figures do not justify. */
export function bandMethodTableProblems(doc: unknown): string[] {
  const schema = JSON.parse(readFileSync(new URL('./band-methods.schema.json', import.meta.url), 'utf8')) as Record<string, unknown>;
  const validate = new Ajv2020({ allErrors: true, strict: true }).compile<BandMethodTable>(schema);
  if (!validate(doc)) return (validate.errors ?? []).map((e) => formatAjvError(e, schema));
  const problems: string[] = [];
  // One entry per market, resolution and coverage: a second evaluation of the same is merged
  // into it by hand (a horizon adopted only where every evaluation qualifies it).
  const keys = doc.measured.map((m) => `${m.market} ${m.interval_s} s at ${m.coverage}`);
  keys.forEach((k, i) => {
    if (keys.indexOf(k) !== i) problems.push(`${k}: more than one entry`);
  });
  for (const m of doc.measured)
    for (const h of m.horizons) {
      const due = adoptedByRule(doc.rule, h);
      if (h.method !== due) problems.push(`${m.market} ${m.interval_s} s D+${h.horizon}: method ${h.method}, but its figures make it ${due}`);
    }
  return problems;
}

/** The rule: the average where its CRPS is lower and its band's coverage within the rule's range. */
export function adoptedByRule(rule: BandMethodTable['rule'], h: Pick<MeasuredHorizon, 'crps' | 'coverage_pct'>): BandMethod {
  const c = h.coverage_pct.average;
  return h.crps.average < h.crps.conformal && c >= rule.coverage_min_pct && c <= rule.coverage_max_pct ? 'average' : 'conformal';
}

let shipped: BandMethodTable | undefined;

/** The shipped table (band-methods.json), read and checked once; a broken file throws naming its problems. */
export function shippedBandMethods(): BandMethodTable {
  if (shipped) return shipped;
  const doc: unknown = JSON.parse(readFileSync(new URL('./band-methods.json', import.meta.url), 'utf8'));
  const problems = bandMethodTableProblems(doc);
  if (problems.length > 0) throw new Error(`forecast/band-methods.json: ${problems.join('; ')}`);
  shipped = doc as BandMethodTable;
  return shipped;
}

/**
 * Per horizon 1..horizonDays (index h - 1), the band method of a market at a resolution and
 * band coverage: the measured entry's where there is one, else conformal.
 */
export function bandMethodsFor(table: BandMethodTable, market: string, intervalS: number, coverage: number, horizonDays: number): BandMethod[] {
  const entry = table.measured.find((m) => m.market === market && m.interval_s === intervalS && Math.abs(m.coverage - coverage) < 1e-9);
  return Array.from({ length: horizonDays }, (_, i) => entry?.horizons.find((h) => h.horizon === i + 1)?.method ?? 'conformal');
}

/** "average D+1..D+4, D+7; conformal D+5, D+6": for logs, the stored run's method and `forecast eval`. */
export function describeBandMethods(methods: readonly BandMethod[]): string {
  const byMethod = new Map<BandMethod, number[]>();
  methods.forEach((m, i) => byMethod.set(m, [...(byMethod.get(m) ?? []), i + 1]));
  const ranges = (hs: number[]): string => {
    const out: string[] = [];
    for (let i = 0; i < hs.length; i++) {
      let j = i;
      while (j + 1 < hs.length && hs[j + 1] === hs[j] + 1) j++;
      // Three or more in a row as a range; two stay two.
      if (j >= i + 2) {
        out.push(`D+${hs[i]}..D+${hs[j]}`);
        i = j;
      } else out.push(`D+${hs[i]}`);
    }
    return out.join(', ');
  };
  return [...byMethod.entries()].map(([m, hs]) => `${m} ${ranges(hs)}`).join('; ');
}
