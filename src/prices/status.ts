// Text rendering of price coverage for `metergate prices status`.
import type { PendingChunk } from '../store/price-fetch.js';
import type { PriceCoverage } from '../store/prices.js';
import type { ExogenousSeriesCoverage } from '../store/exogenous.js';
import { marketByCode } from './markets.js';
import { localDate } from './timezone.js';

const iso = (ms: number) => new Date(ms).toISOString().replace(':00.000Z', 'Z');

function duration(ms: number): string {
  const h = ms / 3_600_000;
  return h >= 48 ? `${(h / 24).toFixed(1)} d` : h >= 1 ? `${h} h` : `${ms / 60_000} min`;
}

/** A pending chunk with the run that retries it, when the schedule is known. */
export interface PendingRetry extends PendingChunk {
  /** First scheduled sync or repair run at or after nextAttemptAtMs; null = unknown (no config, or the sync is off). */
  readonly retryRunAtMs: number | null;
}

export interface CoverageWithPending extends PriceCoverage {
  readonly pending: readonly PendingRetry[];
  /** The forecaster's exogenous series of the region (load, solar, wind), per series. */
  readonly exogenous?: readonly ExogenousSeriesCoverage[];
}

function exogenousLines(list: readonly ExogenousSeriesCoverage[] | undefined): string[] {
  if (!list) return [];
  if (list.length === 0) return ['  exogenous (load, solar, wind forecasts): none'];
  const out = ['  exogenous (load, solar, wind forecasts):'];
  for (const e of list) {
    if (e.firstStartMs === null || e.lastEndMs === null) continue;
    const missing = e.gaps.reduce((s, g) => s + g.toMs - g.fromMs, 0);
    out.push(`    ${e.series}: ${e.points} points, ${iso(e.firstStartMs)} .. ${iso(e.lastEndMs)}, ${e.gaps.length === 0 ? 'no gaps' : `${e.gaps.length} gap(s), ${duration(missing)} in all`} (${e.sources.join(', ')})`);
  }
  return out;
}

function retryText(p: PendingRetry): string {
  const run = p.retryRunAtMs === null ? '' : ` (the first scheduled run then: ${iso(p.retryRunAtMs)})`;
  return `next attempt not before ${iso(p.nextAttemptAtMs)}${run}`;
}

export function formatCoverage(list: readonly CoverageWithPending[], note = ''): string {
  if (list.length === 0) return 'no prices stored';
  const out: string[] = [];
  for (const c of list) {
    const tz = marketByCode(c.marketArea)?.timeZone ?? 'UTC';
    if (c.periods === 0 || c.firstStartMs === null || c.lastEndMs === null) out.push(`${c.marketArea}: no prices`);
    else {
      out.push(`${c.marketArea}: ${c.periods} periods, first ${iso(c.firstStartMs)}, last ends ${iso(c.lastEndMs)} (through ${localDate(tz, c.lastEndMs - 1)} ${tz})`);
      for (const r of c.resolutions) out.push(`  resolution ${r.durationS / 60} min: ${iso(r.fromMs)} .. ${iso(r.toMs)}`);
      out.push(`  sources: ${c.sources.join(', ')}`);
      if (c.gaps.length === 0) out.push('  gaps: none');
      else {
        const total = c.gaps.reduce((s, g) => s + g.toMs - g.fromMs, 0);
        out.push(`  gaps: ${c.gaps.length} (${duration(total)} in all)`);
        for (const g of c.gaps) {
          const p = c.pending.find((x) => g.fromMs < x.toMs && g.toMs > x.fromMs);
          out.push(`    ${iso(g.fromMs)} .. ${iso(g.toMs)}  ${duration(g.toMs - g.fromMs)}${p ? `  pending, ${retryText(p)}` : ''}`);
        }
      }
    }
    out.push(...exogenousLines(c.exogenous));
    if (c.pending.length > 0) {
      out.push(`  pending: ${c.pending.length} month(s) incomplete after a fetch, retried with backoff`);
      for (const p of c.pending) {
        out.push(
          `    ${localDate(tz, p.fromMs).slice(0, 7)} (${p.source}): ${duration(p.missingS * 1000)} without a price, ${p.attempts} attempt(s), last ${iso(p.lastAttemptAtMs)}: ${p.problem}; ${retryText(p)}`,
        );
      }
    }
  }
  if (note) out.push(note);
  return out.join('\n');
}
