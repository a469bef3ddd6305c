// The store side of the uplink as the daemon builds it (buildUplink, real SQLite file, no
// broker): readings retention and outbox bounds come from the config; a full outbox drops
// its oldest rows with a warning and a count; a message that fails its schema is never
// stored for sending.
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import type { AppContext } from '../../src/context.js';
import { createContext } from '../../src/daemon.js';
import type { MeterSample } from '../../src/domain.js';
import { createLogger } from '../../src/log.js';
import { openDatabase } from '../../src/store/db.js';
import { SessionStore } from '../../src/store/sessions.js';
import { buildUplink } from '../../src/daemon.js';
import type { Outbox } from '../../src/store/outbox.js';
import { buildMeasurement } from '../../src/uplink/messages.js';
import { until } from '../helpers/wait.js';

const ORG = '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11';

/** The broker took every waiting message but the oldest `keep` (the publisher's delete after PUBACK). */
function deliverAll(outbox: Outbox, keep = 0): void {
  outbox.deleteAcked(outbox.page(0, 100_000).slice(keep).map((r) => ({ id: r.id, bytes: r.bytes })));
}
const RID = '0b7e3f4c-1d2a-4e5f-8a9b-0c1d2e3f4a5b';
const DAY = 86_400_000;
const NOW = Date.parse('2026-11-23T12:00:00Z');
let clockNowMs = NOW;

const sample = (sampledAtMs: number, energyWh = 1000): MeterSample => ({
  resourceId: RID,
  sampledAtMs,
  metrics: [
    { name: 'total_active_power', value: 1500, unit: 'W' },
    { name: 'active_energy_import', value: energyWh, unit: 'Wh' },
  ],
});

const dirs: string[] = [];
const contexts: AppContext[] = [];
const stops: Array<() => Promise<void>> = [];
const others: Database.Database[] = [];
afterEach(async () => {
  for (const o of others.splice(0)) o.close();
  for (const s of stops.splice(0)) await s();
  clockNowMs = NOW;
  for (const c of contexts.splice(0)) c.db.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function setup(store: Record<string, unknown>, withMqtt = true) {
  const dir = mkdtempSync(join(tmpdir(), 'mg-recorder-'));
  dirs.push(dir);
  const config = validateConfig({ organization_id: ORG, data_dir: dir, store, ...(withMqtt ? { mqtt: { url: 'mqtts://broker.invalid:8883' } } : {}) }, 'test', {});
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n').filter(Boolean)) logs.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  const dbPath = join(dir, 'metergate.db');
  const ctx = createContext(config, { db: openDatabase(dbPath), logger: createLogger('info', sink), clock: { now: () => clockNowMs } });
  contexts.push(ctx);
  const uplink = buildUplink(ctx);
  stops.push(() => uplink.recorder.stop());
  return { ctx, uplink, logs, dbPath };
}

describe('recorder as the daemon builds it', () => {
  it('purges readings older than store.readings_retention_days, not before', async () => {
    const { uplink } = setup({ readings_retention_days: 2 });
    for (const ageDays of [5, 2.5, 1.5, 0.1]) uplink.recorder.record(sample(NOW - ageDays * DAY));
    expect(uplink.readings.count()).toBe(4);
    // Their measurements wait in the outbox and take their metrics from the readings: kept.
    expect(await uplink.recorder.purge()).toBe(0);
    deliverAll(uplink.outbox);
    expect(await uplink.recorder.purge()).toBe(2);
    expect(uplink.readings.between(RID, 0, NOW).map((r) => (NOW - r.sampledAtMs) / DAY)).toEqual([1.5, 0.1]);
  });

  it('keeps a reading past the retention while its measurement waits, and sends it whole', async () => {
    const { uplink } = setup({ readings_retention_days: 2 });
    const old = sample(NOW - 5 * DAY, 1234);
    uplink.recorder.record(old);
    uplink.recorder.record(sample(NOW - 1 * DAY, 1235));
    const [first] = uplink.outbox.page(0, 1);
    deliverAll(uplink.outbox, 1); // the newer one was delivered, the old one waits
    expect(await uplink.recorder.purge()).toBe(0);
    const [waiting] = uplink.outbox.page(0, 10);
    expect(waiting.payload).toBe(first.payload);
    expect(waiting.payload).toBe(JSON.stringify(buildMeasurement(ORG, old)));
    deliverAll(uplink.outbox);
    expect(await uplink.recorder.purge()).toBe(1);
  });

  it('bounds the outbox by store.outbox_max_rows: oldest dropped first, counted and logged', () => {
    const { uplink, logs } = setup({ outbox_max_rows: 100 });
    for (let i = 0; i < 103; i++) uplink.recorder.record(sample(NOW - 3_600_000 + i * 10_000, 1000 + i));
    expect(uplink.outbox.depth).toBe(100);
    expect(uplink.outbox.stats().droppedTotal).toBe(3);
    const oldest = JSON.parse(uplink.outbox.page(0, 1)[0].payload) as { data: { sampled_at: string } };
    expect(oldest.data.sampled_at).toBe(new Date(NOW - 3_600_000 + 3 * 10_000).toISOString());
    const warnings = () => logs.filter((l) => l.msg === 'outbox full: dropped the oldest messages');
    // The first drop is logged at once, later ones once a minute with their count.
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toMatchObject({ level: 'warn', dropped: 1, maxRows: 100 });
    clockNowMs = NOW + 60_000;
    uplink.recorder.record(sample(NOW, 2000));
    expect(warnings()).toHaveLength(2);
    expect(warnings()[1]).toMatchObject({ dropped: 3 });
    // Every reading is still kept for pricing.
    expect(uplink.readings.count()).toBe(104);
  });

  it('bounds the outbox by store.outbox_max_bytes too', () => {
    const { uplink } = setup({ outbox_max_bytes: 100_000 });
    for (let i = 0; i < 2000; i++) uplink.recorder.record(sample(NOW - 3_600_000 + i * 1000, 1000 + i));
    const { bytes } = uplink.outbox.stats();
    expect(bytes).toBeLessThanOrEqual(100_000);
    expect(uplink.outbox.depth).toBeLessThan(2000);
    expect(uplink.outbox.stats().droppedTotal).toBe(2000 - uplink.outbox.depth);
  });

  it('never stores for sending a measurement that fails its schema', async () => {
    const { uplink, logs, ctx } = setup({});
    uplink.recorder.record({ resourceId: RID, sampledAtMs: NOW - 1000, metrics: [] }); // metrics: at least 1 item
    uplink.recorder.record({ resourceId: RID, sampledAtMs: NOW - 2000, metrics: [{ name: 'total_active_power', value: 1, unit: '' }] });
    expect(uplink.outbox.depth).toBe(0);
    expect(logs.filter((l) => l.msg === 'message does not match its schema: not stored, not sent')).toHaveLength(2);
    expect(await ctx.metrics.getSingleMetricAsString('metergate_uplink_invalid_messages_total')).toMatch(/type="measurement"} 2/);
    uplink.recorder.record(sample(NOW - 3000));
    expect(uplink.outbox.depth).toBe(1);
  });
  it('commits readings and their messages with synchronous=FULL (a power cut loses none), other writes stay NORMAL', () => {
    const { ctx, uplink } = setup({});
    // SQLite itself reports the level each row was written under (pragma_synchronous: 1 NORMAL, 2 FULL).
    ctx.db.exec(`CREATE TEMP TABLE seen (tbl TEXT, level INTEGER);
      CREATE TEMP TRIGGER r AFTER INSERT ON meter_readings BEGIN INSERT INTO seen SELECT 'readings', synchronous FROM pragma_synchronous; END;
      CREATE TEMP TRIGGER o AFTER INSERT ON outbox BEGIN INSERT INTO seen SELECT 'outbox', synchronous FROM pragma_synchronous; END;`);
    uplink.recorder.record(sample(NOW - 1000));
    expect(ctx.db.prepare('SELECT tbl, level FROM seen').all()).toEqual([
      { tbl: 'readings', level: 2 },
      { tbl: 'outbox', level: 2 },
    ]);
    expect(ctx.db.pragma('synchronous', { simple: true })).toBe(1);
  });
  it('keeps readings a session is priced from (PUT with resource_id) past the retention', async () => {
    const { ctx, uplink } = setup({ readings_retention_days: 2 });
    for (let h = 0; h < 6; h++) uplink.recorder.record(sample(NOW - 10 * DAY + h * 3_600_000, 1000 + h));
    const sessions = new SessionStore(ctx.db);
    sessions.upsert({ cpoTransactionId: 'TX-1', marketArea: 'NL', status: 'completed', startMs: NOW - 10 * DAY + 3_600_000, endMs: NOW - 10 * DAY + 3 * 3_600_000, resourceId: RID, readings: null }, NOW);
    deliverAll(uplink.outbox);
    expect(await uplink.recorder.purge()).toBe(3);
    expect(sessions.localMeterReadingsAround(RID, NOW - 10 * DAY + 3_600_000, NOW - 10 * DAY + 3 * 3_600_000)).toHaveLength(3);
  });

  it('keeps readings the store refuses (locked by another process) in memory and writes them, in order, once it takes writes again', async () => {
    const { ctx, uplink, dbPath, logs } = setup({});
    uplink.recorder.record(sample(NOW - 30_000, 1000));
    // Another connection (what `metergate prices import` or a backup tool would be) holds the write lock.
    const other = new Database(dbPath);
    others.push(other);
    other.exec('BEGIN IMMEDIATE');
    uplink.recorder.record(sample(NOW - 20_000, 1001));
    uplink.recorder.record(sample(NOW - 10_000, 1002));
    // Nothing counted that is not stored: not the readings, not the outbox depth (no phantom backlog).
    expect(uplink.outbox.depth).toBe(1);
    expect(await ctx.metrics.getSingleMetricAsString('metergate_readings_stored_total')).toMatch(/ 1$/m);
    expect(uplink.recorder.view()).toMatchObject({ writable: false, pendingWrites: 2, pendingDroppedTotal: 0 });
    expect(uplink.recorder.view().reason).toMatch(/^SQLITE_BUSY: /);
    expect(await ctx.metrics.getSingleMetricAsString('metergate_store_write_failures_total')).toMatch(/code="SQLITE_BUSY"} 1/);
    expect(logs.filter((l) => l.msg === 'store refuses writes: readings wait in memory and are written when it takes writes again')).toHaveLength(1);
    other.exec('COMMIT');
    // Written by the retry timer, without another reading arriving.
    await until(() => uplink.recorder.view().writable, 'the retry to write the queue', 10_000);
    expect(uplink.recorder.view().pendingWrites).toBe(0);
    expect(uplink.readings.between(RID, 0, NOW).map((r) => r.energyImportWh)).toEqual([1000, 1001, 1002]);
    expect(uplink.outbox.page(0, 10).map((r) => (JSON.parse(r.payload) as { data: { sampled_at: string } }).data.sampled_at)).toEqual(
      [30_000, 20_000, 10_000].map((ago) => new Date(NOW - ago).toISOString()),
    );
    expect(uplink.outbox.depth).toBe(3);
    expect(await ctx.metrics.getSingleMetricAsString('metergate_readings_stored_total')).toMatch(/ 3$/m);
  });

  it('bounds the queue by store.write_queue_max_entries: the oldest go first, counted', async () => {
    const { ctx, uplink, dbPath } = setup({ write_queue_max_entries: 3 });
    const other = new Database(dbPath);
    others.push(other);
    other.exec('BEGIN IMMEDIATE');
    for (let i = 0; i < 5; i++) uplink.recorder.record(sample(NOW - 50_000 + i * 10_000, 1000 + i));
    expect(uplink.recorder.view()).toMatchObject({ writable: false, pendingWrites: 3, pendingDroppedTotal: 2 });
    expect(await ctx.metrics.getSingleMetricAsString('metergate_store_pending_dropped_total')).toMatch(/kind="reading"} 2/);
    other.exec('COMMIT');
    expect(uplink.recorder.flush()).toBe(true);
    expect(uplink.readings.between(RID, 0, NOW).map((r) => r.energyImportWh)).toEqual([1002, 1003, 1004]);
  });

  it('counts a reading as stored only when a row was written (the same instant twice is one reading)', async () => {
    const { ctx, uplink } = setup({});
    uplink.recorder.record(sample(NOW - 1000));
    uplink.recorder.record(sample(NOW - 1000));
    expect(uplink.readings.count()).toBe(1);
    expect(uplink.outbox.depth).toBe(1);
    expect(await ctx.metrics.getSingleMetricAsString('metergate_readings_stored_total')).toMatch(/ 1$/m);
  });

  it('commits the samples of a poll tick together when the tick is done, not one by one', () => {
    const { uplink, dbPath, ctx } = setup({});
    const other = new Database(dbPath, { readonly: true });
    others.push(other);
    const visible = () => other.prepare('SELECT COUNT(*) FROM readings').pluck().get() as number;
    ctx.db.pragma('wal_autocheckpoint = 0'); // the WAL only grows, by one frame per page per commit
    const pageSize = ctx.db.pragma('page_size', { simple: true }) as number;
    const walFrames = () => Math.round(statSync(`${dbPath}-wal`).size / (pageSize + 24));
    const ids = [RID, '1c8f4a5d-2e3b-4f60-9bac-1d2e3f4a5b6c', '2d9a5b6e-3f4c-4a71-8cbd-2e3f4a5b6c7d'];
    // Each meter's first reading writes its number and its hour too (once): not part of what is compared.
    uplink.recorder.record(sample(NOW - 20_000, 999));
    for (const [k, resourceId] of ids.slice(1).entries()) uplink.recorder.record({ ...sample(NOW - 20_000 + k + 1, 999), resourceId });
    const framesBefore = walFrames();
    for (const [k, resourceId] of ids.entries()) uplink.recorder.recordInTick({ ...sample(NOW - 10_000 + k, 1000 + k), resourceId });
    expect(visible()).toBe(3); // nothing of the tick committed yet
    uplink.recorder.tickDone();
    expect(visible()).toBe(6);
    expect(uplink.outbox.depth).toBe(6);
    // One commit: SQLite appended the tick's pages to the WAL once (three commits would append the outbox page three times).
    const framesOneCommit = walFrames() - framesBefore;
    for (const [k, resourceId] of ids.entries()) uplink.recorder.record({ ...sample(NOW - 5_000 + k, 2000 + k), resourceId });
    expect(walFrames() - framesBefore - framesOneCommit).toBeGreaterThanOrEqual(framesOneCommit * 2);
  });

  it('commits samples whose tick-done never comes one poll interval later', async () => {
    const { uplink, dbPath } = setup({});
    const other = new Database(dbPath, { readonly: true });
    others.push(other);
    uplink.recorder.recordInTick(sample(NOW - 10_000));
    expect(other.prepare('SELECT COUNT(*) FROM readings').pluck().get()).toBe(0);
    await until(() => other.prepare('SELECT COUNT(*) FROM readings').pluck().get() === 1, 'the fallback commit', 30_000);
  });

  it('drops on its own a write that fails for a reason other than the storage, and stores the rest of its tick', async () => {
    const { ctx, uplink, logs } = setup({});
    const bad = '9e8d7c6b-5a49-4838-a726-150f4e3d2c1b';
    // A real SQLite refusal that is not the storage's (SQLITE_CONSTRAINT_TRIGGER), for one resource only.
    ctx.db.exec(`CREATE TEMP TRIGGER refuse BEFORE INSERT ON meter_readings WHEN NEW.meter = (SELECT id FROM reading_meters WHERE resource_id = '${bad}') BEGIN SELECT RAISE(ABORT, 'refused for the test'); END;`);
    uplink.recorder.recordInTick(sample(NOW - 10_000, 1000));
    uplink.recorder.recordInTick({ ...sample(NOW - 10_000, 5), resourceId: bad });
    uplink.recorder.recordInTick(sample(NOW - 5_000, 1001));
    uplink.recorder.tickDone();
    expect(uplink.readings.between(RID, 0, NOW).map((r) => r.energyImportWh)).toEqual([1000, 1001]);
    expect(uplink.readings.between(bad, 0, NOW)).toEqual([]);
    expect(uplink.outbox.depth).toBe(2);
    expect(uplink.recorder.view()).toMatchObject({ writable: true, pendingWrites: 0 });
    expect(logs.filter((l) => l.msg === 'write failed for a reason other than the storage: dropped')).toHaveLength(1);
    expect(await ctx.metrics.getSingleMetricAsString('metergate_store_write_failures_total')).toMatch(/code="SQLITE_CONSTRAINT"} 1/);
  });
});
