// kill -9 of the daemon while it drains a backlog, then a restart: nothing lost
// (duplicates allowed). The backlog is 3,000 stored measurements, paced at 500/s.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { validateConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/log.js';
import { openDatabase } from '../../src/store/db.js';
import { Outbox } from '../../src/store/outbox.js';
import { ReadingsStore } from '../../src/store/readings.js';
import { createContext } from '../../src/daemon.js';
import { MeasurementRecorder } from '../../src/uplink/recorder.js';
import { cloudUser, GATEWAY_USER, startMeterRig, type MeterRig } from '../helpers/meter-rig.js';
import { hasMosquitto } from '../helpers/mosquitto.js';
import { ORG } from '../helpers/poller-harness.js';

const MINE = '4a6c8e0a-2b3c-4d5e-8f6a-7b8c9d0e1f2a';
const N = 3000;

describe.skipIf(!hasMosquitto)('kill -9 while draining a backlog', () => {
  let rig: MeterRig;
  const expected: string[] = [];

  beforeAll(async () => {
    rig = await startMeterRig({
      tmpPrefix: 'mg-crash-',
      broker: { users: [GATEWAY_USER, cloudUser(MINE)] },
      config: () => ({ mqtt: { backlog_rate_per_s: 500, inflight_window: 20, reconnect_min_ms: 200, reconnect_max_ms: 1000 } }),
      subscriber: { username: 'cloud', topic: `svc/resources/${MINE}/measurements` },
      startDaemon: false,
    });
    // The backlog: readings of the last hour, stored the way the recorder stores them.
    const config = validateConfig({ organization_id: ORG, data_dir: rig.dataDir, mqtt: { url: rig.broker.url } }, 'test', {});
    const ctx = createContext(config, { db: openDatabase(join(rig.dataDir, 'metergate.db')), logger: createLogger('warn') });
    const recorder = new MeasurementRecorder({ ...ctx, readings: new ReadingsStore(ctx.db), outbox: new Outbox(ctx.db, { maxRows: 1e7, maxBytes: 1e10 }) });
    const t0 = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;
    ctx.db.transaction(() => {
      for (let i = 0; i < N; i++) {
        const at = t0 + i * 1000;
        recorder.record({ resourceId: MINE, sampledAtMs: at, metrics: [{ name: 'total_active_power', value: 1000 + (i % 100), unit: 'W' }, { name: 'active_energy_import', value: 5_000_000 + i, unit: 'Wh' }] });
        expected.push(new Date(at).toISOString());
      }
    })();
    ctx.db.close();
  });

  afterAll(async () => {
    await rig?.stop();
  });

  it('loses nothing across the crash', { timeout: 120_000 }, async () => {
    const sub = rig.sub;
    const first = await rig.startDaemon();
    await sub.waitFor((all) => all.length >= 300, 'part of the backlog');
    await first.kill9();
    const beforeRestart = new Set(sub.messages.map((m) => (m.json.data as { sampled_at: string }).sampled_at)).size;
    expect(beforeRestart, first.output()).toBeLessThan(N); // the crash really came mid-drain

    const second = await rig.startDaemon();
    await sub.waitFor(
      (all) => {
        const got = new Set(all.map((m) => (m.json.data as { sampled_at: string }).sampled_at));
        return expected.every((t) => got.has(t));
      },
      `all ${N} backlog readings`,
      40_000,
    );
    const got = sub.messages.map((m) => (m.json.data as { sampled_at: string }).sampled_at);
    expect(new Set(got).size).toBe(N);
    // Duplicates are allowed but bounded by what was in flight or acknowledged-but-not-deleted at the kill.
    expect(got.length - N).toBeLessThan(1000);
    expect(await second.stop()).toBe(0);
  });
});
