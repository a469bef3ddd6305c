// The periods a plan is made over: the published day-ahead prices as they are (15- and
// 60-minute periods mixed), then, beyond the last published one, the stored forecast with
// its bounds. A forecast period that overlaps a published one is dropped, so published
// prices always win. Pure.
import type { PricePeriod } from '../domain.js';
import type { PlanPeriod } from './plan.js';

export interface ForecastPricePeriod {
  readonly startMs: number;
  readonly durationS: number;
  readonly forecastPerMwh: number;
  readonly lowerPerMwh: number;
  readonly upperPerMwh: number;
}

export function planPeriods(published: readonly PricePeriod[], forecast: readonly ForecastPricePeriod[]): PlanPeriod[] {
  const out: PlanPeriod[] = [...published]
    .sort((a, b) => a.startMs - b.startMs)
    .map((p) => ({ startMs: p.startMs, durationS: p.durationS, pricePerMwh: p.pricePerMwh, lowerPerMwh: p.pricePerMwh, upperPerMwh: p.pricePerMwh, forecast: false }));
  const last = out[out.length - 1];
  const publishedEndMs = last ? last.startMs + last.durationS * 1000 : -Infinity;
  for (const f of [...forecast].sort((a, b) => a.startMs - b.startMs)) {
    if (f.startMs < publishedEndMs) continue;
    out.push({
      startMs: f.startMs,
      durationS: f.durationS,
      pricePerMwh: f.forecastPerMwh,
      lowerPerMwh: Math.min(f.lowerPerMwh, f.forecastPerMwh),
      upperPerMwh: Math.max(f.upperPerMwh, f.forecastPerMwh),
      forecast: true,
    });
  }
  return out;
}
