// The outbox drains with a bounded in-flight window: with the broker's PUBACKs held back
// (a TLS proxy in front of a real mosquitto), exactly mqtt.inflight_window messages go
// out, none is deleted, and the rest go once acknowledgements flow again.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { validateConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/log.js';
import { openDatabase } from '../../src/store/db.js';
import { Outbox } from '../../src/store/outbox.js';
import { MqttConnection } from '../../src/uplink/connection.js';
import { OutboxPublisher } from '../../src/uplink/publisher.js';
import { hasMosquitto, startTlsBroker } from '../helpers/mosquitto.js';
import { startPubackEater } from '../helpers/puback-eater.js';
import { subscribe } from '../helpers/subscriber.js';
import { until } from '../helpers/wait.js';
import { cleanupsAfterEach } from '../helpers/cleanups.js';

const ORG = '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11';
const RESOURCE = '0b7e3f4c-1d2a-4e5f-8a9b-0c1d2e3f4a5b';
const WINDOW = 7;
const N = 60;


const cleanups = cleanupsAfterEach();

describe.skipIf(!hasMosquitto)('outbox in-flight window', () => {
  it(`never has more than mqtt.inflight_window (${WINDOW}) messages unacknowledged`, async () => {
    const broker = await startTlsBroker([
      { username: 'gw', password: 'gw-pw', acl: ['topic write svc/resources/#'] },
      { username: 'cloud', password: 'cloud-pw', acl: [`topic read svc/resources/${RESOURCE}/#`] },
    ]);
    cleanups.push(() => broker.stop());
    const proxy = await startPubackEater(broker);
    cleanups.push(() => proxy.stop());
    const dir = mkdtempSync(join(tmpdir(), 'mg-inflight-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const sub = await subscribe({ url: broker.url, caFile: broker.caFile, username: 'cloud', password: 'cloud-pw', topic: `svc/resources/${RESOURCE}/#` });
    cleanups.push(() => sub.close());

    const config = validateConfig(
      { organization_id: ORG, data_dir: dir, mqtt: { url: proxy.url, username: 'gw', password: 'gw-pw', ca_file: broker.caFile, inflight_window: WINDOW, reconnect_min_ms: 100, reconnect_max_ms: 500 } },
      'test',
      {},
    );
    const logger = createLogger(process.env.TEST_LOG ?? 'silent');
    const db = openDatabase(join(dir, 'metergate.db'));
    cleanups.push(() => {
      db.close();
    });
    const outbox = new Outbox(db, { maxRows: 10_000, maxBytes: 10_000_000 });
    const connection = new MqttConnection({ mqtt: config.mqtt!, clientId: 'gw-inflight-test', logger });
    const publisher = new OutboxPublisher({ config, logger, clock: systemClock, metrics: new Registry(), outbox, connection });
    await publisher.start();
    cleanups.push(() => publisher.stop());
    await until(() => connection.state === 'connected', 'the connection');

    proxy.swallow = true;
    const t0 = Math.floor(Date.now() / 1000) * 1000 - 600_000;
    for (let i = 0; i < N; i++) {
      const { id } = outbox.enqueue({ topic: `svc/resources/${RESOURCE}/measurements`, payload: JSON.stringify({ i }), qos: 1, retain: false, stampedAtMs: t0 + i * 1000 }, Date.now());
      publisher.wake(id);
    }
    await until(() => proxy.swallowed >= WINDOW && sub.messages.length >= WINDOW, 'a full window at the broker and on to the subscriber');
    // Give a publisher that ignored the window every chance to send more (time only makes this stricter).
    await new Promise((r) => setTimeout(r, 1500));
    expect(proxy.swallowed).toBe(WINDOW);
    expect(sub.messages.map((m) => (m.json as { i: number }).i)).toEqual(Array.from({ length: WINDOW }, (_, i) => i)); // oldest first
    expect(outbox.depth).toBe(N); // nothing deleted without its PUBACK

    proxy.swallow = false;
    proxy.dropConnections(); // the held messages go again on the new connection
    await until(() => outbox.depth === 0, 'the whole outbox acknowledged');
    const seen = new Set(sub.messages.map((m) => (m.json as { i: number }).i));
    expect(seen.size).toBe(N);
  });
});
