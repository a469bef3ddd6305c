// The readings: every accepted meter sample, kept for session pricing and history, in time
// order (migration 200: a poll tick appends to one leaf instead of one per meter).
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

/**
 * Where the next step of a retention purge starts: readings of one resource from an instant
 * on in the table from before migration 200 (readings_by_meter, by resource), then readings
 * from a key on in meter_readings (by time).
 */
export type PurgeCursor =
  | { readonly table: 'by_meter'; readonly resourceId: string; readonly fromMs: number }
  | { readonly table: 'by_time'; readonly fromId: number };

interface Row {
  resource_id: string;
  sampled_at_ms: number;
  energy_import_wh: number | null;
  power_w: number | null;
  metrics_json: string;
  clock_suspect: number;
}

/** A reading's instant and cumulative imported energy (session pricing). */
export interface EnergyAt {
  readonly sampledAtMs: number;
  readonly energyImportWh: number;
}

const metricValue = (metrics: readonly Metric[], name: string): number | null => metrics.find((m) => m.name === name)?.value ?? null;

/** meter_readings.id = sampled_at_ms * METER_SLOTS + meter (migration 200). */
export const METER_SLOTS = 1024;
const HOUR_MS = 3_600_000;
/** The smallest and largest key of the readings of any meter at instants fromMs..toMs. */
const firstKey = (fromMs: number): number => fromMs * METER_SLOTS;
const lastKey = (toMs: number): number => toMs * METER_SLOTS + (METER_SLOTS - 1);
const byTime = (a: { sampledAtMs: number }, b: { sampledAtMs: number }): number => a.sampledAtMs - b.sampledAtMs;

/**
 * The first resource id after the given one ('' for the first) in readings_by_meter (the
 * readings from before migration 200), by a skip-scan over its primary key (resource_id,
 * sampled_at_ms): one seek per resource, never a table scan.
 */
export function prepareResourceAfter(db: Db): Statement<[string], string> {
  return db.prepare<[string], string>('SELECT resource_id FROM readings_by_meter WHERE resource_id > ? ORDER BY resource_id LIMIT 1').pluck();
}

/**
 * Per-meter reads of the readings (migration 200). meter_readings is ordered by time, not by
 * meter: a read of one meter in a time range scans the range (every meter's readings in it);
 * a read that looks back or ahead without a bound goes hour by hour through the hours the
 * meter has readings in (meter_reading_hours), never through a gap or another meter's
 * history. Readings from before migration 200 are read from readings_by_meter beside them.
 */
export class MeterReadings {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      meter: db.prepare<[string], number>('SELECT id FROM reading_meters WHERE resource_id = ?').pluck(),
      energyIn: db.prepare<[number, number, number], [number, number]>(
        'SELECT id >> 10, energy_import_wh FROM meter_readings WHERE id BETWEEN ? AND ? AND meter = ? AND energy_import_wh IS NOT NULL ORDER BY id',
      ).raw(),
      lastEnergyIn: db.prepare<[number, number, number], [number, number]>(
        'SELECT id >> 10, energy_import_wh FROM meter_readings WHERE id BETWEEN ? AND ? AND meter = ? AND energy_import_wh IS NOT NULL ORDER BY id DESC LIMIT 1',
      ).raw(),
      firstEnergyIn: db.prepare<[number, number, number], [number, number]>(
        'SELECT id >> 10, energy_import_wh FROM meter_readings WHERE id BETWEEN ? AND ? AND meter = ? AND energy_import_wh IS NOT NULL ORDER BY id LIMIT 1',
      ).raw(),
      hoursBefore: db.prepare<[number, number], number>('SELECT hour FROM meter_reading_hours WHERE meter = ? AND hour <= ? AND with_energy = 1 ORDER BY hour DESC').pluck(),
      hoursAfter: db.prepare<[number, number], number>('SELECT hour FROM meter_reading_hours WHERE meter = ? AND hour >= ? AND with_energy = 1 ORDER BY hour').pluck(),
      byMeterBefore: db.prepare<[string, number], [number, number]>(
        'SELECT sampled_at_ms, energy_import_wh FROM readings_by_meter WHERE resource_id = ? AND sampled_at_ms < ? AND energy_import_wh IS NOT NULL ORDER BY sampled_at_ms DESC LIMIT 1',
      ).raw(),
      byMeterBetween: db.prepare<[string, number, number], [number, number]>(
        'SELECT sampled_at_ms, energy_import_wh FROM readings_by_meter WHERE resource_id = ? AND sampled_at_ms >= ? AND sampled_at_ms <= ? AND energy_import_wh IS NOT NULL ORDER BY sampled_at_ms',
      ).raw(),
      byMeterAfter: db.prepare<[string, number], [number, number]>(
        'SELECT sampled_at_ms, energy_import_wh FROM readings_by_meter WHERE resource_id = ? AND sampled_at_ms > ? AND energy_import_wh IS NOT NULL ORDER BY sampled_at_ms LIMIT 1',
      ).raw(),
    };
  }

  /** The meter's number in meter_readings keys; undefined when it never stored a reading there. */
  meterOf(resourceId: string): number | undefined {
    return this.stmts.meter.get(resourceId);
  }

  /** The last reading with energy sampled before atMs. */
  energyBefore(resourceId: string, atMs: number): EnergyAt | undefined {
    const m = this.meterOf(resourceId);
    let found: EnergyAt | undefined;
    if (m !== undefined) {
      for (const hour of this.stmts.hoursBefore.iterate(m, Math.floor((atMs - 1) / HOUR_MS))) {
        const r = this.stmts.lastEnergyIn.get(firstKey(hour * HOUR_MS), Math.min(lastKey((hour + 1) * HOUR_MS - 1), lastKey(atMs - 1)), m);
        if (r) {
          found = { sampledAtMs: r[0], energyImportWh: r[1] };
          break;
        }
      }
    }
    const old = this.stmts.byMeterBefore.get(resourceId, atMs);
    return old && (!found || old[0] > found.sampledAtMs) ? { sampledAtMs: old[0], energyImportWh: old[1] } : found;
  }

  /** The first reading with energy sampled after atMs. */
  energyAfter(resourceId: string, atMs: number): EnergyAt | undefined {
    const m = this.meterOf(resourceId);
    let found: EnergyAt | undefined;
    if (m !== undefined) {
      for (const hour of this.stmts.hoursAfter.iterate(m, Math.floor((atMs + 1) / HOUR_MS))) {
        const r = this.stmts.firstEnergyIn.get(Math.max(firstKey(hour * HOUR_MS), firstKey(atMs + 1)), lastKey((hour + 1) * HOUR_MS - 1), m);
        if (r) {
          found = { sampledAtMs: r[0], energyImportWh: r[1] };
          break;
        }
      }
    }
    const old = this.stmts.byMeterAfter.get(resourceId, atMs);
    return old && (!found || old[0] < found.sampledAtMs) ? { sampledAtMs: old[0], energyImportWh: old[1] } : found;
  }

  /** Readings with energy sampled in [fromMs, toMs], oldest first. */
  energyBetween(resourceId: string, fromMs: number, toMs: number): EnergyAt[] {
    const m = this.meterOf(resourceId);
    const now = m === undefined ? [] : this.stmts.energyIn.all(firstKey(fromMs), lastKey(toMs), m);
    const old = this.stmts.byMeterBetween.all(resourceId, fromMs, toMs);
    const all = [...old, ...now].map(([t, e]) => ({ sampledAtMs: t, energyImportWh: e }));
    return old.length > 0 && now.length > 0 ? all.sort(byTime) : all;
  }
}

export class ReadingsStore {
  private readonly stmts;
  private readonly sets: MetricSets;

  constructor(private readonly db: Db) {
    this.sets = new MetricSets(db);
    const columns = 'm.resource_id, r.id >> 10 AS sampled_at_ms, r.energy_import_wh, r.power_w, r.metrics_json, r.clock_suspect';
    this.stmts = {
      meter: db.prepare<[string], number>('SELECT id FROM reading_meters WHERE resource_id = ?').pluck(),
      // The next free number; the CHECK refuses a 1025th meter.
      addMeter: db.prepare<[string]>('INSERT INTO reading_meters (id, resource_id) SELECT COALESCE(MAX(id) + 1, 0), ? FROM reading_meters'),
      insert: db.prepare(
        // Flagged when it falls inside the suspect window of a recorded clock step (store/clock-steps.ts).
        // Not again when the same instant was stored before migration 200.
        `INSERT OR IGNORE INTO meter_readings (id, meter, energy_import_wh, power_w, metrics_json, clock_suspect)
         SELECT @at * ${METER_SLOTS} + @meter, @meter, @energy, @power, @metrics, EXISTS (SELECT 1 FROM clock_steps WHERE @at BETWEEN suspect_from_ms AND suspect_to_ms)
         WHERE NOT EXISTS (SELECT 1 FROM readings_by_meter WHERE resource_id = @resource AND sampled_at_ms = @at)`,
      ),
      // Writes a page only for a meter's first reading of an hour (or its first with energy).
      hour: db.prepare<[number, number, number]>(
        `INSERT INTO meter_reading_hours (meter, hour, with_energy) VALUES (?, ?, ?)
         ON CONFLICT (meter, hour) DO UPDATE SET with_energy = 1 WHERE excluded.with_energy = 1 AND with_energy = 0`,
      ),
      between: db.prepare<[number, number, number], Row>(
        `SELECT ${columns} FROM meter_readings r JOIN reading_meters m ON m.id = r.meter WHERE r.id BETWEEN ? AND ? AND r.meter = ? ORDER BY r.id`,
      ),
      byMeterBetween: db.prepare<[string, number, number], Row>(
        'SELECT * FROM readings_by_meter WHERE resource_id = ? AND sampled_at_ms >= ? AND sampled_at_ms <= ? ORDER BY sampled_at_ms',
      ),
      lastHour: db.prepare<[number], number>('SELECT hour FROM meter_reading_hours WHERE meter = ? ORDER BY hour DESC').pluck(),
      lastIn: db.prepare<[number, number, number, number], Row>(
        `SELECT ${columns} FROM meter_readings r JOIN reading_meters m ON m.id = r.meter WHERE r.id BETWEEN ? AND ? AND r.meter = ? ORDER BY r.id DESC LIMIT ?`,
      ),
      byMeterLatest: db.prepare<[string, number], Row>('SELECT * FROM readings_by_meter WHERE resource_id = ? ORDER BY sampled_at_ms DESC LIMIT ?'),
      // The purge of readings_by_meter goes resource by resource through its primary key
      // (resource_id, sampled_at_ms), in bounded steps: never a scan of the whole table.
      resourceAfter: prepareResourceAfter(db),
      // Readings inside a session that is priced from this meter (PUT with resource_id), and
      // those within the edge gap beyond it (its edges are interpolated from them), are its
      // evidence: kept past the retention, or its CDR could no longer be computed.
      sessionWindows: db.prepare<{ r: string; margin: number; cutoff: number }, [number, number | null]>(
        'SELECT start_ms - @margin, end_ms + @margin FROM sessions WHERE resource_id = @r AND start_ms - @margin < @cutoff ORDER BY start_ms',
      ).raw(),
      nthFrom: db.prepare<{ r: string; from: number; to: number; n: number }, number>(
        'SELECT sampled_at_ms FROM readings_by_meter WHERE resource_id = @r AND sampled_at_ms >= @from AND sampled_at_ms < @to ORDER BY sampled_at_ms LIMIT 1 OFFSET @n',
      ).pluck(),
      deleteRange: db.prepare<{ r: string; from: number; to: number }>('DELETE FROM readings_by_meter WHERE resource_id = @r AND sampled_at_ms >= @from AND sampled_at_ms < @to'),
      // meter_readings: by time, every meter at once.
      firstId: db.prepare<[], number | null>('SELECT MIN(id) FROM meter_readings').pluck(),
      nthIdFrom: db.prepare<[number, number, number], number>('SELECT id FROM meter_readings WHERE id >= ? AND id < ? ORDER BY id LIMIT 1 OFFSET ?').pluck(),
      // The kept windows of every meter that overlap [fromMs, toMs), as [meter, first ms, last ms or null].
      windowsIn: db.prepare<{ from: number; to: number; margin: number }, [number, number, number | null]>(
        `SELECT m.id, s.start_ms - @margin, s.end_ms + @margin FROM sessions s JOIN reading_meters m ON m.resource_id = s.resource_id
         WHERE s.start_ms - @margin < @to AND (s.end_ms IS NULL OR s.end_ms + @margin >= @from)`,
      ).raw(),
      deleteIds: db.prepare<[number, number]>('DELETE FROM meter_readings WHERE id >= ? AND id < ?'),
      deleteIdsExcept: db.prepare<[number, number, string]>(
        `DELETE FROM meter_readings WHERE id >= ? AND id < ? AND NOT EXISTS (
           SELECT 1 FROM json_each(?) w WHERE json_extract(w.value, '$[0]') = meter_readings.meter
             AND (meter_readings.id >> 10) >= json_extract(w.value, '$[1]')
             AND (json_extract(w.value, '$[2]') IS NULL OR (meter_readings.id >> 10) <= json_extract(w.value, '$[2]')))`,
      ),
      // Hours before the oldest reading left: nothing to find there any more.
      forgetHours: db.prepare(`DELETE FROM meter_reading_hours WHERE hour < (SELECT MIN(id) FROM meter_readings) / ${METER_SLOTS} / ${HOUR_MS}`),
      count: db.prepare('SELECT (SELECT COUNT(*) FROM meter_readings) + (SELECT COUNT(*) FROM readings_by_meter)').pluck(),
      // Measurements in the outbox take their metrics from their reading (migration 161).
      oldestReferenced: db.prepare<[], number | null>('SELECT MIN(stamped_at_ms) FROM outbox WHERE reading_resource_id IS NOT NULL').pluck(),
    };
  }

  /** Stores a sample; false when the same resource already has a reading at that instant. Call inside a transaction with the outbox write. */
  insert(sample: MeterSample): boolean {
    const { resourceId, metrics } = sample;
    // The key needs whole milliseconds: a sample re-stamped from the monotonic clock (held
    // while the clock was not trusted) carries a fraction. Its message says the same instant
    // (an ISO time has no fraction of a millisecond; Date truncates it).
    const sampledAtMs = Math.floor(sample.sampledAtMs);
    const energy = metricValue(metrics, 'active_energy_import');
    const power = metricValue(metrics, 'total_active_power');
    // Looked up every time (one index seek), never cached: the transaction that added the
    // meter may still roll back (a full disk), and the next reading must then add it again.
    let meter = this.stmts.meter.get(resourceId);
    if (meter === undefined) {
      try {
        meter = Number(this.stmts.addMeter.run(resourceId).lastInsertRowid);
      } catch (err) {
        if (err instanceof Error && 'code' in err && err.code === 'SQLITE_CONSTRAINT_CHECK') throw new Error(`more than ${METER_SLOTS} meters have stored readings on this gateway: reading of ${resourceId} not stored`);
        throw err;
      }
    }
    const stored = this.stmts.insert.run({ resource: resourceId, meter, at: sampledAtMs, energy, power, metrics: this.sets.encode(metrics) }).changes === 1;
    if (stored) this.stmts.hour.run(meter, Math.floor(sampledAtMs / HOUR_MS), energy === null ? 0 : 1);
    return stored;
  }

  /** Readings of a resource with fromMs <= sampledAt <= toMs, oldest first (scans the range: every meter's readings in it). */
  between(resourceId: string, fromMs: number, toMs: number): StoredReading[] {
    const m = this.stmts.meter.get(resourceId);
    const now = m === undefined ? [] : this.stmts.between.all(firstKey(fromMs), lastKey(toMs), m);
    const old = this.stmts.byMeterBetween.all(resourceId, fromMs, toMs);
    const rows = old.length > 0 && now.length > 0 ? [...old, ...now].sort((a, b) => a.sampled_at_ms - b.sampled_at_ms) : [...old, ...now];
    return rows.map((row) => this.toReading(row));
  }

  latest(resourceId: string): StoredReading | null {
    return this.newest(resourceId, 1)[0] ?? null;
  }

  /**
   * The last `count` readings of a resource, newest first: hour by hour back through the hours
   * it has readings in (a few seeks, never a scan), with the readings from before migration 200.
   */
  newest(resourceId: string, count: number): StoredReading[] {
    const m = this.stmts.meter.get(resourceId);
    const rows: Row[] = [];
    if (m !== undefined) {
      for (const hour of this.stmts.lastHour.iterate(m)) {
        rows.push(...this.stmts.lastIn.all(firstKey(hour * HOUR_MS), lastKey((hour + 1) * HOUR_MS - 1), m, count - rows.length));
        if (rows.length >= count) break;
      }
    }
    const old = rows.length < count ? this.stmts.byMeterLatest.all(resourceId, count) : [];
    const all = old.length > 0 ? [...rows, ...old].sort((a, b) => b.sampled_at_ms - a.sampled_at_ms) : rows;
    return all.slice(0, count).map((row) => this.toReading(row));
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

  /** Where a purge starts: readings_by_meter's first resource, else meter_readings' first key; null without readings. */
  firstPurgeCursor(): PurgeCursor | null {
    const resourceId = this.stmts.resourceAfter.get('');
    return resourceId === undefined ? this.firstByTime() : { table: 'by_meter', resourceId, fromMs: Number.MIN_SAFE_INTEGER };
  }

  /**
   * One bounded step of the purge: deletes at most `maxRows` readings, oldest first (in
   * readings_by_meter one resource at a time, through its primary key; in meter_readings
   * every meter at once, through the time-ordered key); returns how many went and where the
   * next step starts (null when done). The session windows are read at every step, so a
   * session stored while a purge runs keeps its readings.
   */
  purgeStep(at: PurgeCursor, cutoffMs: number, sessionEdgeGapMs: number, maxRows: number): { deleted: number; next: PurgeCursor | null } {
    return at.table === 'by_time' ? this.purgeStepByTime(at.fromId, cutoffMs, sessionEdgeGapMs, maxRows) : this.purgeStepByMeter(at, cutoffMs, sessionEdgeGapMs, maxRows);
  }

  private purgeStepByTime(fromId: number, cutoffMs: number, margin: number, maxRows: number): { deleted: number; next: PurgeCursor | null } {
    const cutoffId = firstKey(cutoffMs);
    if (fromId >= cutoffId) return { deleted: 0, next: this.purgeDone() };
    // The (maxRows+1)-th reading of the range, if any, is where the next step starts.
    const stop = this.stmts.nthIdFrom.get(fromId, cutoffId, maxRows);
    const to = stop ?? cutoffId;
    const windows = this.stmts.windowsIn.all({ from: Math.floor(fromId / METER_SLOTS), to: Math.ceil(to / METER_SLOTS), margin });
    const deleted = (windows.length === 0 ? this.stmts.deleteIds.run(fromId, to) : this.stmts.deleteIdsExcept.run(fromId, to, JSON.stringify(windows))).changes;
    return { deleted, next: stop === undefined ? this.purgeDone() : { table: 'by_time', fromId: stop } };
  }

  private purgeDone(): null {
    this.stmts.forgetHours.run();
    return null;
  }

  private firstByTime(): PurgeCursor | null {
    const first = this.stmts.firstId.get() ?? null;
    return first === null ? null : { table: 'by_time', fromId: first };
  }

  private purgeStepByMeter(at: { resourceId: string; fromMs: number }, cutoffMs: number, sessionEdgeGapMs: number, maxRows: number): { deleted: number; next: PurgeCursor | null } {
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
    if (stop !== undefined) return { deleted, next: { table: 'by_meter', resourceId: r, fromMs: stop } };
    return { deleted, next: to >= cutoffMs ? this.nextResource(r) : { table: 'by_meter', resourceId: r, fromMs: to } };
  }

  private nextResource(resourceId: string): PurgeCursor | null {
    const next = this.stmts.resourceAfter.get(resourceId);
    return next === undefined ? this.firstByTime() : { table: 'by_meter', resourceId: next, fromMs: Number.MIN_SAFE_INTEGER };
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
