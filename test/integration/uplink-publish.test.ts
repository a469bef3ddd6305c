// The uplink against a real mosquitto (TLS, password file, ACL): samples committed to
// SQLite, drained oldest first, deleted after PUBACK; the subscriber's ACL lets it read
// only its own resource; MQTT 5 carries a message id; 3.1.1 works too (but cannot tell a
// refused publish from a delivered one).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateConfig } from '../../src/config/load.js';
import type { AppContext } from '../../src/context.js';
import { createContext } from '../../src/daemon.js';
import { createLogger } from '../../src/log.js';
import { openDatabase } from '../../src/store/db.js';
import { buildUplink, type Uplink } from '../../src/daemon.js';
import { messageProblems } from '../../src/uplink/validate.js';
import { hasMosquitto, startTlsBroker, type TlsBroker } from '../helpers/mosquitto.js';
import { subscribe, type TestSubscriber } from '../helpers/subscriber.js';
import { hourAgo, sample } from '../helpers/uplink-samples.js';
import { until } from '../helpers/wait.js';

const ORG = '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11';
const MINE = '0b7e3f4c-1d2a-4e5f-8a9b-0c1d2e3f4a5b';
const OTHER = '7c8d9e0f-1a2b-4c3d-8e4f-5a6b7c8d9e0f';

describe.skipIf(!hasMosquitto)('uplink against mosquitto (TLS, password file, ACL)', () => {
  let broker: TlsBroker;
  let dir: string;

  beforeAll(async () => {
    broker = await startTlsBroker([
      { username: 'gateway', password: 'gw-secret', acl: ['topic write svc/resources/#'] },
      { username: 'cloud', password: 'cloud-secret', acl: [`topic read svc/resources/${MINE}/#`] },
    ]);
    dir = mkdtempSync(join(tmpdir(), 'mg-uplink-'));
  });

  afterAll(async () => {
    await broker?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function startUplink(name: string, protocolVersion: 4 | 5, extra: Record<string, unknown> = {}): Promise<{ ctx: AppContext; uplink: Uplink; stop(): Promise<void> }> {
    const config = validateConfig(
      {
        organization_id: ORG,
        data_dir: join(dir, name),
        mqtt: { url: broker.url, username: 'gateway', password: 'gw-secret', ca_file: broker.caFile, protocol_version: protocolVersion, client_id: `gw-${name}`, reconnect_min_ms: 100, reconnect_max_ms: 500, ...extra },
      },
      'test',
      {},
    );
    const ctx = createContext(config, { db: openDatabase(join(dir, `${name}.db`)), logger: createLogger(process.env.TEST_LOG ?? 'warn') });
    const uplink = buildUplink(ctx);
    for (const m of uplink.modules) await m.start();
    return {
      ctx,
      uplink,
      async stop() {
        for (const m of [...uplink.modules].reverse()) await m.stop();
        ctx.db.close();
      },
    };
  }

  it('commits each sample before publishing, drains oldest first, deletes on PUBACK; the ACL hides other resources', async () => {
    const sub: TestSubscriber = await subscribe({ url: broker.url, caFile: broker.caFile, username: 'cloud', password: 'cloud-secret', topic: 'svc/resources/+/measurements' });
    const gw = await startUplink('v5', 5);
    try {
      await until(() => gw.uplink.publisher!.view().state === 'connected', 'connection');
      const t0 = hourAgo();
      for (let i = 0; i < 50; i++) {
        gw.uplink.recorder.record(sample(MINE, t0 + i * 10_000, 1_000_000 + i));
        gw.uplink.recorder.record(sample(OTHER, t0 + i * 10_000, 5_000 + i));
      }
      // Every reading is in SQLite at once, whatever the broker does.
      expect(gw.uplink.readings.between(MINE, t0, t0 + 49 * 10_000)).toHaveLength(50);
      await sub.waitFor((all) => all.length >= 50, '50 measurements');
      await until(() => gw.uplink.outbox.depth === 0, 'outbox empty');
      await new Promise((r) => setTimeout(r, 200));
      expect(sub.messages).toHaveLength(50);
      for (const m of sub.messages) {
        expect(m.topic).toBe(`svc/resources/${MINE}/measurements`);
        expect(messageProblems('measurement', m.json)).toEqual([]);
        expect(m.retain).toBe(false);
        expect(m.messageId).toMatch(/^[0-9a-f-]{36}$/);
      }
      const sampled = sub.messages.map((m) => (m.json.data as { sampled_at: string }).sampled_at);
      expect(sampled).toEqual([...sampled].sort());
      expect(sampled[0]).toBe(new Date(t0).toISOString());
      expect(new Set(sub.messages.map((m) => m.messageId)).size).toBe(50);
    } finally {
      await sub.close();
      await gw.stop();
    }
  });

  it('works over MQTT 3.1.1 as well', async () => {
    const sub = await subscribe({ url: broker.url, caFile: broker.caFile, username: 'cloud', password: 'cloud-secret', topic: `svc/resources/${MINE}/#`, protocolVersion: 4 });
    const gw = await startUplink('v4', 4);
    try {
      const t0 = hourAgo() + 600_000;
      for (let i = 0; i < 5; i++) gw.uplink.recorder.record(sample(MINE, t0 + i * 10_000, 2_000 + i));
      await sub.waitFor((all) => all.length >= 5, '5 measurements');
      await until(() => gw.uplink.outbox.depth === 0, 'outbox empty');
      expect(sub.messages.map((m) => (m.json.data as { sampled_at: string }).sampled_at)).toEqual([0, 1, 2, 3, 4].map((i) => new Date(t0 + i * 10_000).toISOString()));
      // The broker saw the gateway speak 3.1.1 (mosquitto's p2), and the v5 gateway speak 5.0 (p5).
      expect(broker.log()).toMatch(/as gw-v4 \(p2,/);
      expect(broker.log()).toMatch(/as gw-v5 \(p5,/);
    } finally {
      await sub.close();
      await gw.stop();
    }
  });

  it('keeps messages while the broker refuses the password, and never logs it', async () => {
    const gw = await startUplink('badpw', 5, { password: 'wrong-password' });
    try {
      gw.uplink.recorder.record(sample(MINE, hourAgo() + 1_200_000, 1));
      await until(() => gw.uplink.publisher!.view().lastError !== null, 'a connection error');
      expect(gw.uplink.publisher!.view().lastError).toMatch(/user name or password|not authorized/);
      expect(gw.uplink.publisher!.view().state).not.toBe('connected');
      expect(gw.uplink.outbox.depth).toBe(1);
    } finally {
      await gw.stop();
    }
  });

  it('keeps a message the broker refuses by ACL (MQTT 5 reason code 135): held, not deleted, and the outbox not blocked', async () => {
    const gw = await startUplink('acl', 5, { topic_prefix: 'forbidden' });
    try {
      gw.uplink.recorder.record(sample(MINE, hourAgo() + 1_200_000, 1));
      await until(() => gw.uplink.outbox.depth === 0 && gw.uplink.outbox.heldCount === 1, 'refused row held');
      const metrics = await gw.ctx.metrics.getSingleMetricAsString('metergate_uplink_refused_total');
      expect(metrics).toMatch(/metergate_uplink_refused_total\{reason_code="135",outcome="held"\} 1/);
      expect(gw.uplink.outbox.heldGroups()).toEqual([expect.objectContaining({ reason: 'refused', topic: `forbidden/resources/${MINE}/measurements`, reasonCode: 135, count: 1 })]);
    } finally {
      await gw.stop();
    }
  });

  it('under MQTT 3.1.1 the broker acknowledges a publish its ACL refuses and drops it: the gateway cannot tell (why doctor and docs/uplink.md recommend 5.0)', async () => {
    const sub = await subscribe({ url: broker.url, caFile: broker.caFile, username: 'cloud', password: 'cloud-secret', topic: `svc/resources/${MINE}/#` });
    const gw = await startUplink('acl-v4', 4, { topic_prefix: 'forbidden' });
    try {
      gw.uplink.recorder.record(sample(MINE, hourAgo() + 1_500_000, 1));
      await until(() => gw.uplink.outbox.depth === 0, 'the row gone after a PUBACK');
      expect(gw.uplink.outbox.heldCount).toBe(0);
      const metrics = await gw.ctx.metrics.getSingleMetricAsString('metergate_uplink_published_total');
      expect(metrics).toMatch(/metergate_uplink_published_total 1/);
    } finally {
      await sub.close();
      await gw.stop();
    }
  });

  it('drains a backlog at backlog_rate_per_s while fresh readings go out at once', async () => {
    const sub = await subscribe({ url: broker.url, caFile: broker.caFile, username: 'cloud', password: 'cloud-secret', topic: `svc/resources/${MINE}/measurements` });
    // The backlog is written before the gateway connects: 200 readings at 40/s take ~5 s.
    const t0 = hourAgo() + 1_800_000;
    const config = validateConfig(
      {
        organization_id: ORG,
        data_dir: join(dir, 'paced'),
        mqtt: { url: broker.url, username: 'gateway', password: 'gw-secret', ca_file: broker.caFile, client_id: 'gw-paced', backlog_rate_per_s: 40, inflight_window: 10 },
      },
      'test',
      {},
    );
    const ctx = createContext(config, { db: openDatabase(join(dir, 'paced.db')), logger: createLogger(process.env.TEST_LOG ?? 'warn') });
    const uplink = buildUplink(ctx);
    for (let i = 0; i < 200; i++) uplink.recorder.record(sample(MINE, t0 + i * 1000, 10_000 + i));
    for (const m of uplink.modules) await m.start();
    try {
      await sub.waitFor((all) => all.length >= 20, 'the backlog to start draining');
      const fresh = Math.floor(Date.now() / 1000) * 1000 - 1000;
      uplink.recorder.record(sample(MINE, fresh, 99_999));
      await sub.waitFor((all) => all.some((m) => (m.json.data as { sampled_at: string }).sampled_at === new Date(fresh).toISOString()), 'the fresh reading');
      const position = sub.messages.findIndex((m) => (m.json.data as { sampled_at: string }).sampled_at === new Date(fresh).toISOString());
      expect(position).toBeLessThan(150); // it did not wait behind the 200-row backlog
      await sub.waitFor((all) => all.length >= 201, 'the whole backlog', 30_000);
      const backlog = sub.messages.filter((_, i) => i !== position).map((m) => (m.json.data as { sampled_at: string }).sampled_at);
      expect(backlog).toEqual([...backlog].sort()); // still oldest first
    } finally {
      await sub.close();
      for (const m of [...uplink.modules].reverse()) await m.stop();
      ctx.db.close();
    }
  });
});
