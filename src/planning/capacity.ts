// The Belgian (Flemish, Fluvius) capacity tariff as a limit on charging. Pure.
//
// The tariff (VREG tariff methodology 2021-2024, in force for households and small
// businesses on low voltage since 2023-01-01; docs/grid-limits.md "Belgium"): the network
// fee is billed on each month's peak, the highest quarter-hour average import demand of the
// month, averaged over the last 12 months, each month counted at no less than 2.5 kW.
// Charging that raises a quarter-hour above the month's peak so far therefore costs the new
// peak's excess (€/kW per month) in every one of the next 12 bills' averages; below the
// peak so far (or below 2.5 kW) it costs nothing extra.
//
// The rule (docs/planning.md "The capacity peak"):
// - the cap is the larger of the month's peak so far (the meter's 1-0:1.6.0), a configured
//   target (site.capacity.target_kw: a peak the owner accepts) and the 2.5 kW billing floor,
//   less a margin (site.capacity.margin_kw) for the controller's reaction;
// - the quarter-hour may take cap × 15 min of energy. What it already drew (the meter's
//   running average 1-0:1.4.0 × the time elapsed, plus the site's power since that reading)
//   and what the other load will draw in the rest of it (its power now × the time left) come
//   off; the rest, spread over the time left, is what charging may draw now;
// - and never more than cap − other load: power carried over the boundary into the next
//   quarter-hour (a charger takes seconds to lower) must fit there too, so a quarter-hour
//   that drew little so far does not let charging catch up;
// - 0 when nothing is left (the other load alone fills the quarter-hour).

/** The billing period of the Flemish capacity tariff. */
export const QUARTER_HOUR_MS = 900_000;
/** Every month's peak is billed at no less than this (VREG tariff methodology 2021-2024). */
export const FLUVIUS_BILLING_FLOOR_KW = 2.5;

/** The quarter-hour containing `atMs`. Belgian local time is UTC+1/+2, so its quarter-hours start on UTC quarter-hours. */
export function quarterHourStartMs(atMs: number): number {
  return Math.floor(atMs / QUARTER_HOUR_MS) * QUARTER_HOUR_MS;
}

export interface CapSettings {
  /** A peak the owner accepts this month (kW); null: only the month's peak so far. */
  readonly targetKw: number | null;
  /** Taken off the cap: the controller's reaction and the meter's rounding. */
  readonly marginKw: number;
  /** The billing floor (FLUVIUS_BILLING_FLOOR_KW). */
  readonly floorKw: number;
}

/** The quarter-hour average the charging must not raise the site above (kW), before the margin. */
export function capKw(monthPeakKw: number | null, settings: CapSettings): number {
  return Math.max(settings.floorKw, monthPeakKw ?? 0, settings.targetKw ?? 0);
}

export interface QuarterHourInput {
  readonly nowMs: number;
  /** The running quarter-hour's start (quarterHourStartMs(nowMs)). */
  readonly quarterStartMs: number;
  /** Energy the site drew from the grid so far in this quarter-hour (kWh). */
  readonly energyDrawnKwh: number;
  /** What the rest of the site (not the planned charging) draws now (kW; negative: it feeds in, solar, which charging may use too). */
  readonly otherLoadKw: number;
  /** The cap, margin already taken off (kW). */
  readonly capKw: number;
}

export interface QuarterHourAllowance {
  /** What charging may draw now, kW (≥ 0): the lower of `restKw` and `steadyKw`. */
  readonly allowedKw: number;
  /** What the rest of this quarter-hour leaves charging, spread over the time left (kW, may be negative: already over). */
  readonly restKw: number;
  /** cap − other load (kW): what a whole quarter-hour leaves charging at the other load of now. */
  readonly steadyKw: number;
  /** The quarter-hour's average if charging drew `allowedKw` to its end (kW). */
  readonly projectedAverageKw: number;
  readonly secondsLeft: number;
}

const HOUR_MS = 3_600_000;

export function quarterHourAllowance(input: QuarterHourInput): QuarterHourAllowance {
  const endMs = input.quarterStartMs + QUARTER_HOUR_MS;
  // Never less than a second: at the very end the division would blow up.
  const leftMs = Math.max(1000, Math.min(QUARTER_HOUR_MS, endMs - input.nowMs));
  const leftH = leftMs / HOUR_MS;
  const other = input.otherLoadKw;
  const budgetKwh = (input.capKw * QUARTER_HOUR_MS) / HOUR_MS;
  const restKw = (budgetKwh - Math.max(0, input.energyDrawnKwh) - other * leftH) / leftH;
  const steadyKw = input.capKw - other;
  const allowedKw = Math.max(0, Math.min(restKw, steadyKw));
  const projectedKwh = Math.max(0, input.energyDrawnKwh) + Math.max(0, other + allowedKw) * leftH;
  return { allowedKw: round3(allowedKw), restKw: round3(restKw), steadyKw: round3(steadyKw), projectedAverageKw: round3((projectedKwh * HOUR_MS) / QUARTER_HOUR_MS), secondsLeft: Math.round(leftMs / 1000) };
}

/**
 * Energy drawn so far in the quarter-hour (kWh) from the meter's running average (1-0:1.4.0,
 * the average over the part of the quarter-hour elapsed when the telegram was sent), and the
 * site's power since then: a reading from an earlier quarter-hour counts nothing of it.
 */
export function energyDrawnKwh(input: { readonly nowMs: number; readonly readingAtMs: number; readonly averageKw: number; readonly sitePowerKw: number }): number {
  const startMs = quarterHourStartMs(input.nowMs);
  const fromMs = Math.max(startMs, Math.min(input.readingAtMs, input.nowMs));
  const averaged = input.readingAtMs >= startMs ? (Math.max(0, input.averageKw) * (fromMs - startMs)) / HOUR_MS : 0;
  return averaged + (Math.max(0, input.sitePowerKw) * (input.nowMs - fromMs)) / HOUR_MS;
}

/** Power (kW) as a current per phase (A) for connectors using up to `phases` phases: the most phases give the least current, never too much power. */
export function kwToCurrentPerPhaseA(kw: number, phases: number, voltageV: number): number {
  return Math.max(0, (kw * 1000) / (Math.max(1, phases) * voltageV));
}

/** The cost of raising the month's peak from `capKw` to `newPeakKw`, at `eurPerKwMonth` (0 when not raised). */
export function newPeakCost(capKw: number, newPeakKw: number, eurPerKwMonth: number): number {
  return Math.max(0, newPeakKw - capKw) * eurPerKwMonth;
}

const round3 = (v: number) => Math.round(v * 1000) / 1000;
