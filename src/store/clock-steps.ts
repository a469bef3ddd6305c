// Clock steps beyond the tolerance and the readings they flag (migration 011). The flag
// lives on the reading (clock_suspect, in meter_readings and in readings_by_meter from
// before migration 200), so whoever reads readings can tell; the steps table keeps what
// happened, and flags readings stored later inside a step's window.
import type { Db } from './db.js';
import { METER_SLOTS, prepareResourceAfter } from './readings.js';

export interface ClockStep {
  readonly detectedAtMs: number;
  /** Change of (wall - monotonic); negative when the clock went back. */
  readonly stepMs: number;
  readonly suspectFromMs: number;
  readonly suspectToMs: number;
}

export interface SuspectReadings {
  readonly count: number;
  readonly firstMs: number | null;
  readonly lastMs: number | null;
}

/**
 * Wall-time window whose readings a step makes ambiguous, from the wall times of the two
 * checks around it (pure). A step happened somewhere between them: readings of that
 * interval may carry either offset. A step back of |s| also means the next |s| of wall time
 * repeats instants already stamped before it.
 */
export function suspectWindow(previousWallMs: number, wallMs: number, stepMs: number): { fromMs: number; toMs: number } {
  return { fromMs: previousWallMs + Math.min(0, stepMs), toMs: wallMs + Math.max(0, -stepMs) };
}

export class ClockStepStore {
  private readonly stmts;

  constructor(private readonly db: Db) {
    this.stmts = {
      insert: db.prepare('INSERT INTO clock_steps (detected_at_ms, step_ms, suspect_from_ms, suspect_to_ms) VALUES (?, ?, ?, ?)'),
      nextResource: prepareResourceAfter(db),
      flag: db.prepare('UPDATE readings_by_meter SET clock_suspect = 1 WHERE resource_id = ? AND sampled_at_ms BETWEEN ? AND ? AND clock_suspect = 0'),
      // Time-ordered: every meter's readings in the window at once.
      flagByTime: db.prepare<[number, number]>(`UPDATE meter_readings SET clock_suspect = 1 WHERE id BETWEEN ? * ${METER_SLOTS} AND ? * ${METER_SLOTS} + ${METER_SLOTS - 1} AND clock_suspect = 0`),
      latest: db.prepare<[], { detected_at_ms: number; step_ms: number; suspect_from_ms: number; suspect_to_ms: number }>(
        'SELECT detected_at_ms, step_ms, suspect_from_ms, suspect_to_ms FROM clock_steps ORDER BY id DESC LIMIT 1',
      ),
      flaggedCount: db.prepare('SELECT (SELECT COUNT(*) FROM meter_readings WHERE clock_suspect = 1) + (SELECT COUNT(*) FROM readings_by_meter WHERE clock_suspect = 1)').pluck(),
    };
  }

  /** Records a step and flags the readings already stored in its window (one transaction); returns how many were flagged. */
  record(step: ClockStep): number {
    return this.db.transaction(() => {
      this.stmts.insert.run(step.detectedAtMs, step.stepMs, step.suspectFromMs, step.suspectToMs);
      let flagged = this.stmts.flagByTime.run(step.suspectFromMs, step.suspectToMs).changes;
      for (let r = this.stmts.nextResource.get('') as string | undefined; r !== undefined; r = this.stmts.nextResource.get(r) as string | undefined) {
        flagged += this.stmts.flag.run(r, step.suspectFromMs, step.suspectToMs).changes;
      }
      return flagged;
    })();
  }

  latest(): ClockStep | null {
    const r = this.stmts.latest.get();
    return r ? { detectedAtMs: r.detected_at_ms, stepMs: r.step_ms, suspectFromMs: r.suspect_from_ms, suspectToMs: r.suspect_to_ms } : null;
  }

  /** Readings flagged so far (all resources). */
  flaggedCount(): number {
    return this.stmts.flaggedCount.get() as number;
  }
}

/** Flagged readings of one resource in [fromMs, toMs] (session pricing asks before it bills). */
export function suspectReadings(db: Db, resourceId: string, fromMs: number, toMs: number): SuspectReadings {
  // Both through their partial indexes on flagged readings (meter_readings_clock_suspect, readings_clock_suspect).
  const r = db
    .prepare<{ r: string; from: number; to: number }, { n: number; first: number | null; last: number | null }>(
      `SELECT SUM(n) AS n, MIN(first) AS first, MAX(last) AS last FROM (
         SELECT COUNT(*) AS n, MIN(f.id >> 10) AS first, MAX(f.id >> 10) AS last FROM meter_readings f
           WHERE f.meter = (SELECT id FROM reading_meters WHERE resource_id = @r) AND f.id BETWEEN @from * ${METER_SLOTS} AND @to * ${METER_SLOTS} + ${METER_SLOTS - 1} AND f.clock_suspect = 1
         UNION ALL
         SELECT COUNT(*), MIN(sampled_at_ms), MAX(sampled_at_ms) FROM readings_by_meter WHERE resource_id = @r AND sampled_at_ms BETWEEN @from AND @to AND clock_suspect = 1)`,
    )
    .get({ r: resourceId, from: fromMs, to: toMs })!;
  return { count: r.n ?? 0, firstMs: r.first, lastMs: r.last };
}
