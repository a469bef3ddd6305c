// Pure: a charger's GetCompositeSchedule answer against the schedule the gateway sent it for
// the connector's plan (profile-dispatcher.ts): the limit each allows at every instant either
// changes, over the time both cover. Equal within 0.1 (the precision OCPP 1.6 limits have).
export interface ScheduleLike {
  readonly startSchedule?: string;
  readonly duration?: number;
  readonly chargingRateUnit: string;
  readonly chargingSchedulePeriod: ReadonlyArray<{ readonly startPeriod: number; readonly limit: number }>;
}

export interface ScheduleDifference {
  readonly atMs: number;
  readonly compositeLimit: number;
  readonly plannedLimit: number;
}

export type ScheduleComparison =
  | { readonly comparable: true; readonly equal: boolean; readonly fromMs: number; readonly toMs: number; readonly differences: readonly ScheduleDifference[] }
  | { readonly comparable: false; readonly reason: string };

interface Step {
  readonly atMs: number;
  readonly limit: number;
}

function steps(s: ScheduleLike, startMs: number): { steps: Step[]; endMs: number } {
  const list = [...s.chargingSchedulePeriod].sort((a, b) => a.startPeriod - b.startPeriod).map((p) => ({ atMs: startMs + p.startPeriod * 1000, limit: p.limit }));
  return { steps: list, endMs: s.duration === undefined ? Infinity : startMs + s.duration * 1000 };
}

const limitAt = (list: readonly Step[], atMs: number): number | null => {
  let limit: number | null = null;
  for (const st of list) if (st.atMs <= atMs) limit = st.limit;
  return limit;
};

/** `compositeStartMs`: the answer's scheduleStart (or its schedule's startSchedule). */
export function compareSchedules(composite: ScheduleLike, compositeStartMs: number, planned: ScheduleLike): ScheduleComparison {
  if (composite.chargingRateUnit !== planned.chargingRateUnit) return { comparable: false, reason: `the composite schedule is in ${composite.chargingRateUnit}, the plan was sent in ${planned.chargingRateUnit}` };
  if (planned.startSchedule === undefined) return { comparable: false, reason: 'the sent schedule has no startSchedule' };
  const c = steps(composite, Date.parse(composite.startSchedule ?? '') || compositeStartMs);
  const p = steps(planned, Date.parse(planned.startSchedule));
  const fromMs = Math.max(c.steps[0]?.atMs ?? Infinity, p.steps[0]?.atMs ?? Infinity);
  const toMs = Math.min(c.endMs, p.endMs);
  if (!(fromMs < toMs)) return { comparable: false, reason: 'the composite schedule and the sent plan do not overlap in time' };
  const instants = [...new Set([fromMs, ...c.steps.map((s) => s.atMs), ...p.steps.map((s) => s.atMs)])].filter((t) => t >= fromMs && t < toMs).sort((a, b) => a - b);
  const differences: ScheduleDifference[] = [];
  for (const atMs of instants) {
    const compositeLimit = limitAt(c.steps, atMs)!;
    const plannedLimit = limitAt(p.steps, atMs)!;
    if (Math.abs(compositeLimit - plannedLimit) > 0.1 + 1e-9) differences.push({ atMs, compositeLimit, plannedLimit });
  }
  return { comparable: true, equal: differences.length === 0, fromMs, toMs: Number.isFinite(toMs) ? toMs : fromMs, differences };
}
