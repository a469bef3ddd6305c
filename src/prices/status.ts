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

/** Why a region is listed: configured (prices.regions), a configured one's exogenous neighbour, or only stored. */
export interface RegionRole {
  /** Undefined when no config was read (--db): nothing is marked then. */
  readonly configured?: boolean;
  /** Configured regions whose forecaster reads this region's load, solar and wind forecasts (markets.json exogenous_neighbours). */
  readonly exogenousFor?: readonly string[];
}

export interface CoverageWithPending extends PriceCoverage, RegionRole {
  readonly pending: readonly PendingRetry[];
  /** The forecaster's exogenous series of the region (load, solar, wind), per series. */
  readonly exogenous?: readonly ExogenousSeriesCoverage[];
}

/** The role of each listed region, given the configured ones (null: no config read). */
export function regionRoles(regions: readonly string[], configured: readonly string[] | null): Map<string, RegionRole> {
  const roles = new Map<string, RegionRole>();
  if (configured === null) return roles;
  const own = new Set(configured.map((r) => marketByCode(r)?.code ?? r.toUpperCase()));
  for (const r of regions) {
    const exogenousFor = [...own].filter((c) => marketByCode(c)?.exogenousNeighbours?.includes(r));
    roles.set(r, { configured: own.has(r), ...(own.has(r) || exogenousFor.length === 0 ? {} : { exogenousFor }) });
  }
  return roles;
}

/**
 * The region a `prices import` without --region is for: the one configured region. With
 * --region, that one (checked). A problem to print otherwise.
 */
export function importRegion(asked: string | undefined, configured: readonly string[] | null): { region: string; defaulted: boolean } | { problem: string } {
  if (asked !== undefined) {
    const m = marketByCode(asked);
    return m ? { region: m.code, defaulted: false } : { problem: `unknown region "${asked}"` };
  }
  if (configured === null) return { problem: 'give --region (with --db no config is read, so no configured region is known)' };
  if (configured.length === 1) {
    const m = marketByCode(configured[0]);
    return m ? { region: m.code, defaulted: true } : { problem: `unknown region "${configured[0]}" in prices.regions` };
  }
  if (configured.length === 0) return { problem: 'give --region: prices.regions is empty, so there is no region to default to' };
  return { problem: `give --region: prices.regions has ${configured.length} regions (${configured.join(', ')}), so which one this file is for is not known` };
}

function roleText(c: RegionRole): string {
  if (c.configured !== false) return '';
  return c.exogenousFor ? ` (not in prices.regions: load, solar and wind forecasts for ${c.exogenousFor.join(', ')}'s forecaster)` : ' (not in prices.regions: stored here, not synced)';
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
    const role = roleText(c);
    if (c.periods === 0 || c.firstStartMs === null || c.lastEndMs === null) out.push(`${c.marketArea}${role}: ${c.exogenousFor ? 'no prices (none needed)' : 'no prices'}`);
    else {
      out.push(`${c.marketArea}${role}: ${c.periods} periods, first ${iso(c.firstStartMs)}, last ends ${iso(c.lastEndMs)} (through ${localDate(tz, c.lastEndMs - 1)} ${tz})`);
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
