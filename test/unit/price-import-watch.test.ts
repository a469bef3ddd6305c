// The import watch on a real SQLite file with two connections, as the daemon and a
// `prices import` have: a commit of the other connection is told once (prices.updated /
// exogenous.updated with its range), the daemon's own writes and what was stored before the
// start are not, and a commit that stores no price (a token) tells nothing.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import { EventBus, type Events } from '../../src/events.js';
import { createLogger } from '../../src/log.js';
import { PriceImportWatch } from '../../src/prices/import-watch.js';
import { storePrices } from '../../src/prices/price-merge.js';
import { mergeExogenous } from '../../src/prices/exogenous/exogenous-merge.js';
import { openDatabase, type Db } from '../../src/store/db.js';
import { ExogenousStore } from '../../src/store/exogenous.js';
import { PriceStore } from '../../src/store/prices.js';
import { TokenStore } from '../../src/store/tokens.js';

const H = 3_600_000;
const T0 = Date.parse('2026-11-29T00:00:00Z');
const hours = (from: number, n: number, price = 80) => Array.from({ length: n }, (_, i) => ({ marketArea: 'NL', startMs: from + i * H, durationS: 3600, pricePerMwh: price + i }));

describe('price import watch', () => {
  const dirs: string[] = [];
  const dbs: Db[] = [];
  afterEach(() => {
    for (const db of dbs.splice(0)) db.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  function setup() {
    const dir = mkdtempSync(join(tmpdir(), 'mg-import-watch-'));
    dirs.push(dir);
    const daemonDb = openDatabase(join(dir, 'metergate.db'));
    const importDb = openDatabase(join(dir, 'metergate.db'));
    dbs.push(daemonDb, importDb);
    const config = validateConfig({ organization_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301', data_dir: dir, prices: { regions: ['NL'], source: 'none' } }, 'test', {});
    const logger = createLogger('silent');
    const events = new EventBus(logger);
    const told: Array<{ event: keyof Events; payload: unknown }> = [];
    events.on('prices.updated', (p) => told.push({ event: 'prices.updated', payload: p }));
    events.on('exogenous.updated', (p) => told.push({ event: 'exogenous.updated', payload: p }));
    const watch = new PriceImportWatch({ config, db: daemonDb, events, logger }, 60_000);
    return { daemonDb, importDb, watch, told };
  }

  it('tells another connection\'s prices and exogenous points once, with their range', async () => {
    const { importDb, watch, told, daemonDb } = setup();
    storePrices(new PriceStore(importDb), hours(T0 - 24 * H, 24), { source: 'csv:before.csv', fetchedAtMs: T0 - 1000 });
    await watch.start();
    watch.check();
    expect(told).toEqual([]);
    // The import: tomorrow's prices and load forecast, from the other connection.
    storePrices(new PriceStore(importDb), hours(T0, 24), { source: 'csv:today.csv', fetchedAtMs: T0 + 1000 });
    mergeExogenous(
      new ExogenousStore(importDb),
      Array.from({ length: 24 }, (_, i) => ({ marketArea: 'NL', series: 'load' as const, startMs: T0 + i * H, durationS: 3600, valueMw: 12_000 })),
      { source: 'csv:today.csv', fetchedAtMs: T0 + 1000 },
    );
    watch.check();
    expect(told).toEqual([
      { event: 'prices.updated', payload: { marketArea: 'NL', fromMs: T0, toMs: T0 + 24 * H, periods: 24 } },
      { event: 'exogenous.updated', payload: { marketArea: 'NL', fromMs: T0, toMs: T0 + 24 * H, periods: 24, source: 'import' } },
    ]);
    watch.check();
    expect(told).toHaveLength(2);
    // The daemon's own write changes no data_version for itself; a token from the other side stores no price.
    storePrices(new PriceStore(daemonDb), hours(T0 + 24 * H, 24), { source: 'entsoe', fetchedAtMs: T0 + 2000 });
    watch.check();
    expect(told).toHaveLength(2);
    new TokenStore(importDb).create({ name: 't', type: 'cdrs', nowMs: T0 });
    watch.check();
    // That commit made the watch look: the daemon's own rows fetched since are told then (a refresh twice, harmless).
    expect(told.map((t) => t.event)).toEqual(['prices.updated', 'exogenous.updated', 'prices.updated']);
    await watch.stop();
  });
});
