// The periods a plan is made over, priced at what the driver pays per kWh under the
// market's tariff instead of the day-ahead price alone: day-ahead x multiplier + supplier
// margin + the grid fee at that time, as per MWh so plan.ts takes them unchanged. A period
// across a grid fee zone edge is cut there, so a cheap day-ahead hour in a peak grid zone
// is as dear as it is to the driver. VAT (a factor above 0) and the fee per session change
// no choice and are left out: plan costs are comparable with the cdr's energy lines excl.
// VAT. Each period is priced under the tariff in force at its start (a tariff starts at a
// local midnight, a period boundary); a period before any tariff keeps its day-ahead price. Pure.
import { gridFeeSpans, type Tariff } from '../pricing/tariff.js';
import type { PlanPeriod } from './plan.js';

export function allInPlanPeriods(periods: readonly PlanPeriod[], tariffAt: (atMs: number) => Tariff | undefined): PlanPeriod[] {
  const out: PlanPeriod[] = [];
  for (const p of periods) {
    const tariff = tariffAt(p.startMs);
    if (!tariff) {
      out.push(p);
      continue;
    }
    // Per MWh, each term scaled on its own (fewer float digits than scaling their sum).
    const perMwh = (dayAheadPerMwh: number, gridFeePerKwh: number) => dayAheadPerMwh * tariff.dayAheadMultiplier + tariff.supplierMarginPerKwh * 1000 + gridFeePerKwh * 1000;
    for (const span of gridFeeSpans(tariff, p.startMs, p.startMs + p.durationS * 1000)) {
      out.push({
        startMs: span.startMs,
        durationS: (span.endMs - span.startMs) / 1000,
        pricePerMwh: perMwh(p.pricePerMwh, span.perKwh),
        lowerPerMwh: perMwh(p.lowerPerMwh, span.perKwh),
        upperPerMwh: perMwh(p.upperPerMwh, span.perKwh),
        forecast: p.forecast,
      });
    }
  }
  return out;
}
