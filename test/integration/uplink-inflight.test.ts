// The outbox drains with a bounded in-flight window: with the broker's PUBACKs held back
// (a TLS proxy in front of a real mosquitto), exactly mqtt.inflight_window messages go
// out, none is deleted, and the rest go once acknowledgements flow again.
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { OutboxPublisher } from '../../src/uplink/publisher.js';
import { hasMosquitto } from '../helpers/mosquitto.js';
import { subscribe } from '../helpers/subscriber.js';
import { startUplinkBehindEater } from '../helpers/uplink-behind-eater.js';
import { until } from '../helpers/wait.js';
import { cleanupsAfterEach } from '../helpers/cleanups.js';

const RESOURCE = '0b7e3f4c-1d2a-4e5f-8a9b-0c1d2e3f4a5b';
const WINDOW = 7;
const N = 60;


const cleanups = cleanupsAfterEach();

describe.skipIf(!hasMosquitto)('outbox in-flight window', () => {
  it(`never has more than mqtt.inflight_window (${WINDOW}) messages unacknowledged`, async () => {
    const { broker, proxy, config, logger, outbox, connection } = await startUplinkBehindEater(cleanups, {
      otherUsers: [{ username: 'cloud', password: 'cloud-pw', acl: [`topic read svc/resources/${RESOURCE}/#`] }],
      mqtt: { inflight_window: WINDOW },
      clientId: 'gw-inflight-test',
      tmpPrefix: 'mg-inflight-',
    });
    const sub = await subscribe({ url: broker.url, caFile: broker.caFile, username: 'cloud', password: 'cloud-pw', topic: `svc/resources/${RESOURCE}/#` });
    cleanups.push(() => sub.close());

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
