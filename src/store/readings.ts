// The readings table: every accepted meter sample, kept for session pricing and history.
import type { MeterSample, Metric } from '../domain.js';
import type { Statement } from 'better-sqlite3';
import type { Db } from './db.js';
import { MetricSets } from './metric-sets.js';

/** One stored reading, in the domain's words. */
export interface StoredReading {
  readonly resourceId: string;
  readonly sampledAtMs: number;
  /** Cumulative imported energy (Wh), null when the meter does not report it. */
  readonly energyImportWh: number | null;
  readonly powerW: number | null;
  readonly metrics: readonly Metric[];
  /** Sampled inside the window of a clock step beyond the tolerance: its time cannot be placed for sure (docs/clock-safety.md). */
  readonly clockSuspect: boolean;
}

/** Where the next step of a retention purge starts: this resource, readings from this instant on. */
export interface PurgeCursor {
  readonly resourceId: string;
  readonly fromMs: number;
}

interface Row {
  resource_id: string;
  sampled_at_ms: number;
  energy_import_wh: number | null;
  power_w: number | null;
  metrics_json: string;
  clock_suspect: number;
}

const metricValue = (metrics: readonly Metric[], name: string): number | null => metrics.find((m) => m.name === name)?.value ?? null;

/**
 * The first resource id after the given one ('' for the first), by a skip-scan over the
 * primary key (resource_id, sampled_at_ms): one seek per resource, never a table scan.
 */
export function prepareResourceAfter(db: Db): Statement<[string], string> {
  return db.prepare<[string], string>('SELECT resource_id FROM readings WHERE resource_id > ? ORDER BY resource_id LIMIT 1').pluck();
}

export class ReadingsStore {
  private readonly stmts;
  private readonly sets: MetricSets;

  constructor(private readonly db: Db) {
    this.sets = new MetricSets(db);
    this.stmts = {
      insert: db.prepare(
        // Flagged when it falls inside the suspect window of a recorded clock step (store/clock-steps.ts).
        `INSERT OR IGNORE INTO readings (resource_id, sampled_at_ms, energy_import_wh, power_w, metrics_json, clock_suspect)
         VALUES (@resource, @at, @energy, @power, @metrics, EXISTS (SELECT 1 FROM clock_steps WHERE @at BETWEEN suspect_from_ms AND suspect_to_ms))`,
      ),
      between: db.prepare<[string, number, number], Row>(
        'SELECT * FROM readings WHERE resource_id = ? AND sampled_at_ms >= ? AND sampled_at_ms <= ? ORDER BY sampled_at_ms',
      ),
      latest: db.prepare<[string], Row>('SELECT * FROM readings WHERE resource_id = ? ORDER BY sampled_at_ms DESC LIMIT 1'),
      // The retention purge goes resource by resource through the primary key
      // (resource_id, sampled_at_ms), in bounded steps: never a scan of the whole table.
      resourceAfter: prepareResourceAfter(db),
      // Readings inside a session that is priced from this meter (PUT with resource_id), and
      // those within the edge gap beyond it (its edges are interpolated from them), are its
      // evidence: kept past the retention, or its CDR could no longer be computed.
      sessionWindows: db.prepare<{ r: string; margin: number; cutoff: number }, [number, number | null]>(
        'SELECT start_ms - @margin, end_ms + @margin FROM sessions WHERE resource_id = @r AND start_ms - @margin < @cutoff ORDER BY start_ms',
      ).raw(),
      nthFrom: db.prepare<{ r: string; from: number; to: number; n: number }, number>(
        'SELECT sampled_at_ms FROM readings WHERE resource_id = @r AND sampled_at_ms >= @from AND sampled_at_ms < @to ORDER BY sampled_at_ms LIMIT 1 OFFSET @n',
      ).pluck(),
      deleteRange: db.prepare<{ r: string; from: number; to: number }>('DELETE FROM readings WHERE resource_id = @r AND sampled_at_ms >= @from AND sampled_at_ms < @to'),
      count: db.prepare('SELECT COUNT(*) FROM readings').pluck(),
      // Measurements in the outbox take their metrics from their reading (migration 161).
      oldestReferenced: db.prepare<[], number | null>('SELECT MIN(stamped_at_ms) FROM outbox WHERE reading_resource_id IS NOT NULL').pluck(),
    };
  }

  /** Stores a sample; false when the same resource already has a reading at that instant. Call inside a transaction with the outbox write. */
  insert(sample: MeterSample): boolean {
    const { resourceId, sampledAtMs, metrics } = sample;
    const energy = metricValue(metrics, 'active_energy_import');
    const power = metricValue(metrics, 'total_active_power');
    return this.stmts.insert.run({ resource: resourceId, at: sampledAtMs, energy, power, metrics: this.sets.encode(metrics) }).changes === 1;
  }

  /** Readings of a resource with fromMs <= sampledAt <= toMs, oldest first (session pricing: cumulative energy in Wh with timestamps). */
  between(resourceId: string, fromMs: number, toMs: number): StoredReading[] {
    return this.stmts.between.all(resourceId, fromMs, toMs).map((row) => this.toReading(row));
  }

  latest(resourceId: string): StoredReading | null {
    const row = this.stmts.latest.get(resourceId);
    return row ? this.toReading(row) : null;
  }

  /**
   * Deletes readings sampled before cutoffMs, except those of local-meter sessions and
   * within `sessionEdgeGapMs` of their edges; returns how many went. All at once: the
   * daemon purges in steps instead (`purgeStep`, yielding to the event loop in between).
   */
  purgeBefore(cutoffMs: number, sessionEdgeGapMs = 0): number {
    cutoffMs = this.purgeCutoff(cutoffMs);
    let n = 0;
    for (let at = this.firstPurgeCursor(); at !== null; ) {
      const step = this.purgeStep(at, cutoffMs, sessionEdgeGapMs, 10_000);
      n += step.deleted;
      at = step.next;
    }
    return n;
  }

  /**
   * The retention cutoff, moved back before the oldest reading a waiting measurement still
   * takes its metrics from (a backlog older than the retention after a long outage): those
   * readings stay until their message is delivered or dropped by the outbox bound. Reads the
   * outbox once (a scan, once an hour).
   */
  purgeCutoff(cutoffMs: number): number {
    const oldest = this.stmts.oldestReferenced.get() ?? null;
    return oldest === null ? cutoffMs : Math.min(cutoffMs, oldest);
  }

  /** Where a purge starts: the oldest instant of the first resource; null without readings. */
  firstPurgeCursor(): PurgeCursor | null {
    const resourceId = this.stmts.resourceAfter.get('');
    return resourceId === undefined ? null : { resourceId, fromMs: Number.MIN_SAFE_INTEGER };
  }

  /**
   * One bounded step of the purge: deletes at most `maxRows` readings of the cursor's
   * resource, oldest first, through the primary key; returns how many went and where the
   * next step starts (null when every resource is done). The session windows are read at
   * every step, so a session stored while a purge runs keeps its readings.
   */
  purgeStep(at: PurgeCursor, cutoffMs: number, sessionEdgeGapMs: number, maxRows: number): { deleted: number; next: PurgeCursor | null } {
    const r = at.resourceId;
    let from = at.fromMs;
    let to = cutoffMs;
    for (const [start, end] of this.stmts.sessionWindows.all({ r, margin: sessionEdgeGapMs, cutoff: cutoffMs })) {
      if (end !== null && end < from) continue; // window behind the cursor
      if (start <= from) {
        // The cursor is inside a kept window: go on after it.
        if (end === null) return { deleted: 0, next: this.nextResource(r) };
        from = end + 1;
        continue;
      }
      to = Math.min(to, start); // the range ends where the next kept window starts
      break;
    }
    if (from >= cutoffMs) return { deleted: 0, next: this.nextResource(r) };
    // The (maxRows+1)-th reading of the range, if any, is where the next step starts.
    const stop = this.stmts.nthFrom.get({ r, from, to, n: maxRows });
    const deleted = this.stmts.deleteRange.run({ r, from, to: stop ?? to }).changes;
    if (stop !== undefined) return { deleted, next: { resourceId: r, fromMs: stop } };
    return { deleted, next: to >= cutoffMs ? this.nextResource(r) : { resourceId: r, fromMs: to } };
  }

  private nextResource(resourceId: string): PurgeCursor | null {
    const next = this.stmts.resourceAfter.get(resourceId);
    return next === undefined ? null : { resourceId: next, fromMs: Number.MIN_SAFE_INTEGER };
  }

  count(): number {
    return this.stmts.count.get() as number;
  }

  private toReading(row: Row): StoredReading {
    return {
      resourceId: row.resource_id,
      sampledAtMs: row.sampled_at_ms,
      energyImportWh: row.energy_import_wh,
      powerW: row.power_w,
      metrics: this.sets.decode(row.metrics_json),
      clockSuspect: row.clock_suspect === 1,
    };
  }
}
