// Metric names and units stored once (table metric_sets, migration 160); a reading keeps its values only.
import type { Metric } from '../domain.js';
import type { Db } from './db.js';

/**
 * readings.metrics_json holds `[set_id, v1, v2, ...]`: the values only, their names and units
 * once in metric_sets (migration 160). An SDM630's 11 values take ~90 bytes instead of ~600,
 * so one small page holds several readings and a tick writes fewer pages (SD-card wear,
 * docs/uplink.md). Rows written before keep the full array of {name, value, unit}.
 */
export class MetricSets {
  private readonly byId = new Map<number, ReadonlyArray<readonly [string, string]>>();
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      find: db.prepare<[string], number>('SELECT id FROM metric_sets WHERE names_units = ?').pluck(),
      add: db.prepare<[string]>('INSERT INTO metric_sets (names_units) VALUES (?)'),
      get: db.prepare<[number], string>('SELECT names_units FROM metric_sets WHERE id = ?').pluck(),
    };
  }

  /** The stored form of `metrics` (inside the caller's transaction: a new set commits with its first reading). */
  encode(metrics: readonly Metric[]): string {
    const key = JSON.stringify(metrics.map((m) => [m.name, m.unit]));
    // Looked up every time (one index seek), never cached: the transaction that added a set
    // may still roll back (a full disk), and the next reading must then add it again.
    const id = this.stmts.find.get(key) ?? Number(this.stmts.add.run(key).lastInsertRowid);
    return JSON.stringify([id, ...metrics.map((m) => m.value)]);
  }

  /** The metrics as the measurement message carries them (name, value, unit), as JSON. */
  contractJson(stored: string): string {
    return JSON.stringify(this.decode(stored).map((m) => ({ name: m.name, value: m.value, unit: m.unit })));
  }

  decode(json: string): Metric[] {
    const stored = JSON.parse(json) as unknown[];
    if (stored.length === 0 || typeof stored[0] !== 'number') return stored as Metric[]; // written before migration 160
    const id = stored[0];
    let set = this.byId.get(id);
    if (set === undefined) {
      const namesUnits = this.stmts.get.get(id);
      if (namesUnits === undefined) throw new Error(`reading refers to metric set ${id}, which is not stored`);
      set = JSON.parse(namesUnits) as Array<[string, string]>;
      this.byId.set(id, set);
    }
    return set.map(([name, unit], i) => ({ name, value: stored[i + 1] as number, unit }));
  }
}
