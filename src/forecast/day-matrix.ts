// A series laid out as local days x wall-clock slots, the shape every daily model of
// electricity prices uses. DST days are normalized to the regular slot count: on a
// 25-hour day the repeated wall-clock hour is averaged, on a 23-hour day the missing hour
// is filled from its neighbours. Periods coarser than a slot fill every slot they cover;
// finer periods are averaged into their slot.
import { localDayOf, localMinuteOfDay, periodStartsOfDay } from './local-days.js';

export interface DayMatrix {
  /** Local day number of row 0. */
  readonly firstDay: number;
  readonly days: number;
  /** Slots per day (24 hourly, 96 quarter-hourly). */
  readonly slots: number;
  /** days * slots values, row-major; NaN where unknown. */
  readonly values: Float64Array;
}

export interface SeriesPoint {
  readonly startMs: number;
  readonly durationS: number;
  readonly value: number;
}

export function emptyMatrix(firstDay: number, days: number, slots: number): DayMatrix {
  return { firstDay, days, slots, values: new Float64Array(days * slots).fill(NaN) };
}

export function valueAt(m: DayMatrix, day: number, slot: number): number {
  const r = day - m.firstDay;
  if (r < 0 || r >= m.days) return NaN;
  return m.values[r * m.slots + slot];
}

/** Whether every slot of a day is known. */
export function dayComplete(m: DayMatrix, day: number): boolean {
  const r = day - m.firstDay;
  if (r < 0 || r >= m.days) return false;
  for (let s = 0; s < m.slots; s++) if (Number.isNaN(m.values[r * m.slots + s])) return false;
  return true;
}

/** Builds the matrix for local days [firstDay, lastDay] from UTC periods. */
export function toDayMatrix(
  timeZone: string,
  points: readonly SeriesPoint[],
  firstDay: number,
  lastDay: number,
  slots: number,
): DayMatrix {
  const builder = new DayMatrixBuilder(timeZone, firstDay, lastDay, slots);
  for (const p of points) builder.add(p.startMs, p.durationS, p.value);
  return builder.finish();
}

/**
 * toDayMatrix one period at a time, so a caller reading periods from a store fills the
 * matrix as it reads instead of holding them all as objects first (the forecaster's year
 * of prices). The same sums in the same order: the same matrix, to the bit.
 */
export class DayMatrixBuilder {
  private readonly days: number;
  private readonly slotMin: number;
  private readonly sum: Float64Array;
  private count: Uint16Array;

  constructor(
    private readonly timeZone: string,
    private readonly firstDay: number,
    private readonly lastDay: number,
    private readonly slots: number,
  ) {
    this.days = lastDay - firstDay + 1;
    this.slotMin = 1440 / slots;
    this.sum = new Float64Array(this.days * slots);
    this.count = new Uint16Array(this.days * slots);
  }

  add(startMs: number, durationS: number, value: number): void {
    const { timeZone, firstDay, lastDay, slots, slotMin, sum, count } = this;
    // Walk the period in slot-sized steps (at least one step) so coarse periods fill all
    // slots they cover and fine periods land in theirs.
    const stepMs = Math.min(durationS * 1000, slotMin * 60_000);
    for (let t = startMs; t < startMs + durationS * 1000; t += stepMs) {
      const day = localDayOf(timeZone, t);
      if (day < firstDay || day > lastDay) continue;
      const slot = Math.floor(localMinuteOfDay(timeZone, t) / slotMin);
      const i = (day - firstDay) * slots + slot;
      sum[i] += value;
      count[i] += 1;
    }
  }

  /** The matrix (the sums become the values: call once). */
  finish(): DayMatrix {
    const { days, slots, sum, count } = this;
    // The sums' buffer becomes the values: one matrix-sized buffer instead of two.
    const values = sum;
    for (let i = 0; i < values.length; i++) values[i] = count[i] > 0 ? sum[i] / count[i] : NaN;
    fillSmallGaps(values, days, slots);
    this.count = new Uint16Array(0);
    return { firstDay: this.firstDay, days, slots, values };
  }
}

/**
 * The matrix without its leading days that hold no value, except the last `keepDays` of
 * them (a copy; the matrix itself when there is nothing to drop). Every reader of a day
 * matrix reads a day outside it as unknown, as it reads an unknown day inside it; what
 * runs along the rows (trailingMeans' running sums, fillUnknownDays' runs) sees the same
 * sums and the same long run as long as `keepDays` covers its longest span: so a store
 * holding a year does not make every matrix of the forecaster two years long.
 */
export function withoutUnknownLead(m: DayMatrix, keepDays: number): DayMatrix {
  let first = m.values.findIndex((v) => !Number.isNaN(v));
  if (first < 0) first = m.values.length;
  const drop = Math.max(0, Math.floor(first / m.slots) - keepDays);
  if (drop === 0) return m;
  return { firstDay: m.firstDay + drop, days: m.days - drop, slots: m.slots, values: m.values.slice(drop * m.slots) };
}

/**
 * Fills gaps of at most a quarter of a day inside a day by linear interpolation (the DST
 * hour, a missing value); a day missing more stays unknown.
 */
function fillSmallGaps(values: Float64Array, days: number, slots: number): void {
  const maxGap = Math.max(1, Math.floor(slots / 4));
  for (let d = 0; d < days; d++) {
    const base = d * slots;
    let known = 0;
    for (let s = 0; s < slots; s++) if (!Number.isNaN(values[base + s])) known++;
    if (known === slots) continue;
    if (known < slots - maxGap) {
      for (let s = 0; s < slots; s++) values[base + s] = NaN;
      continue;
    }
    for (let s = 0; s < slots; s++) {
      if (!Number.isNaN(values[base + s])) continue;
      let a = s - 1;
      while (a >= 0 && Number.isNaN(values[base + a])) a--;
      let b = s + 1;
      while (b < slots && Number.isNaN(values[base + b])) b++;
      const va = a >= 0 ? values[base + a] : NaN;
      const vb = b < slots ? values[base + b] : NaN;
      if (Number.isNaN(va)) values[base + s] = vb;
      else if (Number.isNaN(vb)) values[base + s] = va;
      else values[base + s] = va + ((vb - va) * (s - a)) / (b - a);
    }
  }
}

/**
 * Maps one day's slot values back to the real periods of `intervalS` seconds of that
 * local day (UTC starts): a period spanning several slots gets their mean, a period inside
 * a slot gets the slot's value; the repeated autumn hour gets its wall-clock slot's value.
 */
export function slotsToPeriods(
  timeZone: string,
  day: number,
  daySlots: ArrayLike<number>,
  slots: number,
  intervalS: number,
): { startMs: number; value: number }[] {
  const slotMin = 1440 / slots;
  const stepMin = intervalS / 60;
  return periodStartsOfDay(timeZone, day, intervalS).map((startMs) => {
    const minute = localMinuteOfDay(timeZone, startMs);
    const first = Math.floor(minute / slotMin);
    const n = Math.max(1, Math.round(stepMin / slotMin));
    let sum = 0;
    for (let k = 0; k < n; k++) sum += daySlots[Math.min(slots - 1, first + k)];
    return { startMs, value: sum / n };
  });
}

/**
 * Trailing means of each slot over the known days of a span of `days` days ending on the
 * row's day (running sums; features read them per row). Days in `skipDays` (imputed from
 * a neighbour) count as unknown, so a stand-in day does not weigh its source twice. A span
 * with fewer than half its days known is missing history and reads NaN; one missing day
 * must not switch the model off for the span's length (issue 15). `into`: the array to
 * write (z's length), else a new one.
 */
export function trailingMeans(z: DayMatrix, days: number, skipDays?: ReadonlySet<number>, into?: Float64Array): DayMatrix {
  const out = (into ?? new Float64Array(z.values.length)).fill(NaN);
  const minKnown = Math.ceil(days / 2);
  const at = (r: number, s: number): number => (skipDays?.has(z.firstDay + r) ? NaN : z.values[r * z.slots + s]);
  for (let s = 0; s < z.slots; s++) {
    let sum = 0;
    let known = 0;
    for (let r = 0; r < z.days; r++) {
      const v = at(r, s);
      if (!Number.isNaN(v)) {
        sum += v;
        known++;
      }
      if (r >= days) {
        const old = at(r - days, s);
        if (!Number.isNaN(old)) {
          sum -= old;
          known--;
        }
      }
      if (r >= days - 1 && known >= minKnown) out[r * z.slots + s] = known === days ? sum / days : sum / known;
    }
  }
  return { firstDay: z.firstDay, days: z.days, slots: z.slots, values: out };
}

/**
 * A copy in which days up to `throughDay` that are not complete read as the nearest
 * complete day up to `throughDay` (the earlier one on a tie), so a missing origin or lag
 * day falls back to its nearest known day. Only runs of at most `maxRunDays` missing days
 * are filled: a longer run is missing history, not a missing day, and stays unknown. Days
 * after `throughDay` stay as they are, so no later information leaks in. `filled` lists
 * the replaced days (callers keep them out of anything fitted or scored as a target).
 */
export function fillUnknownDays(m: DayMatrix, throughDay: number, maxRunDays = Infinity): { matrix: DayMatrix; filled: number[] } {
  const last = Math.min(m.days - 1, throughDay - m.firstDay);
  const complete: boolean[] = [];
  for (let r = 0; r <= last; r++) complete.push(dayComplete(m, m.firstDay + r));
  if (complete.every(Boolean)) return { matrix: m, filled: [] };
  // Copied at the first day filled: most origins have only runs too long to fill (the
  // years before the store's first price), and a matrix-sized copy each was garbage.
  let values: Float64Array | undefined;
  const filled: number[] = [];
  for (let r = 0; r <= last; ) {
    if (complete[r]) {
      r++;
      continue;
    }
    let end = r;
    while (end + 1 <= last && !complete[end + 1]) end++;
    const before = r - 1 >= 0 ? r - 1 : undefined;
    const after = end + 1 <= last ? end + 1 : undefined;
    if (end - r + 1 <= maxRunDays && (before !== undefined || after !== undefined)) {
      for (let d = r; d <= end; d++) {
        const src = after === undefined || (before !== undefined && d - before <= after - d) ? before! : after;
        values ??= Float64Array.from(m.values);
        values.copyWithin(d * m.slots, src * m.slots, (src + 1) * m.slots);
        filled.push(m.firstDay + d);
      }
    }
    r = end + 1;
  }
  return { matrix: values ? { firstDay: m.firstDay, days: m.days, slots: m.slots, values } : m, filled };
}
