// The readings table: every accepted meter sample, kept for session pricing and history.
import type { MeterSample, Metric } from '../domain.js';
import type { Db } from './db.js';

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

interface Row {
  resource_id: string;
  sampled_at_ms: number;
  energy_import_wh: number | null;
  power_w: number | null;
  metrics_json: string;
  clock_suspect: number;
}

const metricValue = (metrics: readonly Metric[], name: string): number | null => metrics.find((m) => m.name === name)?.value ?? null;

export class ReadingsStore {
  private readonly stmts;

  constructor(private readonly db: Db) {
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
      // Readings inside a session that is priced from this meter (PUT with resource_id), and
      // those within the edge gap beyond it (its edges are interpolated from them), are its
      // evidence: kept past the retention, or its CDR could no longer be computed.
      purge: db.prepare<{ cutoff: number; margin: number }>(
        `DELETE FROM readings WHERE sampled_at_ms < @cutoff AND NOT EXISTS (
           SELECT 1 FROM sessions s WHERE s.resource_id = readings.resource_id
             AND readings.sampled_at_ms >= s.start_ms - @margin AND (s.end_ms IS NULL OR readings.sampled_at_ms <= s.end_ms + @margin))`,
      ),
      count: db.prepare('SELECT COUNT(*) FROM readings').pluck(),
    };
  }

  /** Stores a sample; false when the same resource already has a reading at that instant. Call inside a transaction with the outbox write. */
  insert(sample: MeterSample): boolean {
    const { resourceId, sampledAtMs, metrics } = sample;
    const energy = metricValue(metrics, 'active_energy_import');
    const power = metricValue(metrics, 'total_active_power');
    return this.stmts.insert.run({ resource: resourceId, at: sampledAtMs, energy, power, metrics: JSON.stringify(metrics) }).changes === 1;
  }

  /** Readings of a resource with fromMs <= sampledAt <= toMs, oldest first (session pricing: cumulative energy in Wh with timestamps). */
  between(resourceId: string, fromMs: number, toMs: number): StoredReading[] {
    return this.stmts.between.all(resourceId, fromMs, toMs).map(toReading);
  }

  latest(resourceId: string): StoredReading | null {
    const row = this.stmts.latest.get(resourceId);
    return row ? toReading(row) : null;
  }

  /** Deletes readings sampled before cutoffMs, except those of local-meter sessions and within `sessionEdgeGapMs` of their edges; returns how many went. */
  purgeBefore(cutoffMs: number, sessionEdgeGapMs = 0): number {
    return this.stmts.purge.run({ cutoff: cutoffMs, margin: sessionEdgeGapMs }).changes;
  }

  count(): number {
    return this.stmts.count.get() as number;
  }
}

function toReading(row: Row): StoredReading {
  return {
    resourceId: row.resource_id,
    sampledAtMs: row.sampled_at_ms,
    energyImportWh: row.energy_import_wh,
    powerW: row.power_w,
    metrics: JSON.parse(row.metrics_json) as Metric[],
    clockSuspect: row.clock_suspect === 1,
  };
}
