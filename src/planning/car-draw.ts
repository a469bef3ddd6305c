// What the car in a session can draw, learnt from what it drew while it was allowed more.
// Pure: the charger's measured draw at instants of the session and the power its profile
// allowed at each, in; the car's observed maximum current per phase and phases, or nothing,
// out.
//
// A car that keeps drawing less than allowed (it charges on one phase, its on-board charger
// takes 11 A, ...) falls behind every plan made at the charger's limits. The rule
// (docs/planning.md "A car that draws less than allowed"): over a run of measurements at
// least `minRunMs` long in which the car drew something (a phase above `chargingA`) and,
// at every one, clearly less than allowed (its power below `clearlyBelowShare` of the
// allowed power), the car's maximum is the highest phase current it drew, on as many
// phases as it drew on. A measurement where it drew nothing (paused, full) or where it drew
// what it was allowed ends the run: a car held at its limit says nothing about its maximum.

export interface DrawSample {
  readonly atMs: number;
  /** Current per phase L1..L3 (A), when measured per phase. */
  readonly currentsA: readonly [number, number, number] | null;
  /** Power drawn (W), when measured. */
  readonly powerW: number | null;
}

export interface CarDrawRule {
  readonly minRunMs: number;
  /** Drawn power below this share of the allowed power is clearly less. */
  readonly clearlyBelowShare: number;
  /** A phase above this current is one the car draws on. */
  readonly chargingA: number;
}

/** docs/planning.md: 10 minutes below 85 % of the allowed power; a phase counts above 1 A. */
export const CAR_DRAW_RULE: CarDrawRule = { minRunMs: 10 * 60_000, clearlyBelowShare: 0.85, chargingA: 1 };

export interface ObservedDraw {
  readonly maxCurrentA: number;
  readonly phases: number;
  /** The end of the run it was learnt over. */
  readonly atMs: number;
}

export function observeCarDraw(
  samples: readonly DrawSample[],
  /** The power the profile allowed at an instant (W; 0 where it did not charge). */
  allowedPowerW: (atMs: number) => number,
  charger: { readonly phases: number; readonly voltageV: number },
  rule: CarDrawRule = CAR_DRAW_RULE,
): ObservedDraw | null {
  let best: ObservedDraw | null = null;
  let run: { startMs: number; endMs: number; maxA: number; phases: number } | null = null;
  const close = () => {
    if (run && run.endMs - run.startMs >= rule.minRunMs && (!best || run.maxA > best.maxCurrentA || (run.maxA === best.maxCurrentA && run.phases > best.phases))) {
      best = { maxCurrentA: Math.round(run.maxA * 100) / 100, phases: run.phases, atMs: run.endMs };
    }
    run = null;
  };
  for (const s of [...samples].sort((a, b) => a.atMs - b.atMs)) {
    const drawn = drawnOf(s, charger, rule);
    const allowedW = allowedPowerW(s.atMs);
    if (!drawn || allowedW <= 0 || drawn.powerW >= rule.clearlyBelowShare * allowedW) {
      close();
      continue;
    }
    if (!run) run = { startMs: s.atMs, endMs: s.atMs, maxA: drawn.maxA, phases: drawn.phases };
    else run = { startMs: run.startMs, endMs: s.atMs, maxA: Math.max(run.maxA, drawn.maxA), phases: Math.max(run.phases, drawn.phases) };
  }
  close();
  return best;
}

/** Power, highest phase current and phases drawn on; null when the car drew nothing. */
function drawnOf(s: DrawSample, charger: { phases: number; voltageV: number }, rule: CarDrawRule): { powerW: number; maxA: number; phases: number } | null {
  if (s.currentsA) {
    const used = s.currentsA.filter((a) => a > rule.chargingA);
    if (used.length === 0) return null;
    const sumA = s.currentsA.reduce((t, a) => t + Math.max(0, a), 0);
    return { powerW: s.powerW !== null && s.powerW > 0 ? s.powerW : sumA * charger.voltageV, maxA: Math.max(...used), phases: used.length };
  }
  if (s.powerW === null) return null;
  // Power alone: spread over the charger's phases (which ones the car uses is not known).
  const perPhaseA = s.powerW / (charger.phases * charger.voltageV);
  if (perPhaseA <= rule.chargingA / charger.phases) return null;
  return { powerW: s.powerW, maxA: perPhaseA, phases: charger.phases };
}
