// Text rendering of price coverage for `metergate prices status`.
import type { PriceCoverage } from '../store/prices.js';
import { marketByCode } from './markets.js';
import { localDate } from './timezone.js';

const iso = (ms: number) => new Date(ms).toISOString().replace(':00.000Z', 'Z');

function duration(ms: number): string {
  const h = ms / 3_600_000;
  return h >= 48 ? `${(h / 24).toFixed(1)} d` : h >= 1 ? `${h} h` : `${ms / 60_000} min`;
}

export function formatCoverage(list: readonly PriceCoverage[]): string {
  if (list.length === 0) return 'no prices stored';
  const out: string[] = [];
  for (const c of list) {
    if (c.periods === 0 || c.firstStartMs === null || c.lastEndMs === null) {
      out.push(`${c.marketArea}: no prices`);
      continue;
    }
    const tz = marketByCode(c.marketArea)?.timeZone ?? 'UTC';
    out.push(`${c.marketArea}: ${c.periods} periods, first ${iso(c.firstStartMs)}, last ends ${iso(c.lastEndMs)} (through ${localDate(tz, c.lastEndMs - 1)} ${tz})`);
    for (const r of c.resolutions) out.push(`  resolution ${r.durationS / 60} min: ${iso(r.fromMs)} .. ${iso(r.toMs)}`);
    out.push(`  sources: ${c.sources.join(', ')}`);
    if (c.gaps.length === 0) out.push('  gaps: none');
    else {
      const total = c.gaps.reduce((s, g) => s + g.toMs - g.fromMs, 0);
      out.push(`  gaps: ${c.gaps.length} (${duration(total)} in all)`);
      for (const g of c.gaps) out.push(`    ${iso(g.fromMs)} .. ${iso(g.toMs)}  ${duration(g.toMs - g.fromMs)}`);
    }
  }
  return out.join('\n');
}
