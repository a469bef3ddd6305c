// The systemd watchdog is fed only while the publish loop makes progress: through a TLS
// proxy that drops every PUBACK from a real mosquitto (the link and keepalives stay fine),
// the loop stalls, the daemon withholds WATCHDOG=1 (systemd would restart it), and feeding
// resumes once a reconnect gets the messages acknowledged. sd_notify goes to a real
// datagram socket through systemd-notify, as under systemd.
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { Liveness } from '../../src/ops/systemd/liveness.js';
import { SystemdNotifier } from '../../src/ops/systemd/systemd-notify.js';
import { SystemdWatchdog } from '../../src/ops/systemd/watchdog.js';
import { OutboxPublisher } from '../../src/uplink/publisher.js';
import { hasMosquitto } from '../helpers/mosquitto.js';
import { hasPython3, hasSystemdNotify, startNotifySocket } from '../helpers/notify-socket.js';
import { startUplinkBehindEater } from '../helpers/uplink-behind-eater.js';
import { until } from '../helpers/wait.js';
import { cleanupsAfterEach } from '../helpers/cleanups.js';

const RESOURCE = '0b7e3f4c-1d2a-4e5f-8a9b-0c1d2e3f4a5b';
const ready = hasMosquitto && hasSystemdNotify && hasPython3;
if (!ready) console.warn('watchdog stall test skipped: needs mosquitto, systemd-notify and python3 (scripts/install-test-deps)');


const cleanups = cleanupsAfterEach();

describe.skipIf(!ready)('systemd watchdog and the publish loop', () => {
  it('withholds WATCHDOG=1 while the broker acknowledges nothing, and feeds it again once messages are acknowledged', { timeout: 180_000 }, async () => {
    const { proxy, config, logger, outbox, connection } = await startUplinkBehindEater(cleanups, { clientId: 'gw-stall-test', tmpPrefix: 'mg-stall-' });
    const liveness = new Liveness();
    // Short periods so the test takes seconds; the defaults are 120 s and 5 s.
    const publisher = new OutboxPublisher({ config, logger, clock: systemClock, metrics: new Registry(), outbox, connection, liveness, stallAfterMs: 3000, housekeepingMs: 250 });
    const sock = await startNotifySocket();
    cleanups.push(() => sock.close());
    // WatchdogSec=1 s: a ping every 500 ms while every loop is alive.
    const notifier = new SystemdNotifier({ logger, env: { ...process.env, NOTIFY_SOCKET: sock.path, WATCHDOG_USEC: '1000000' } });
    const watchdog = new SystemdWatchdog({ logger, liveness, notifier });
    await publisher.start();
    cleanups.push(() => publisher.stop());
    await watchdog.start();
    cleanups.push(() => watchdog.stop());

    const enqueue = (n: number) => {
      for (let i = 0; i < n; i++) {
        const now = Date.now();
        const { id } = outbox.enqueue({ topic: `svc/resources/${RESOURCE}/measurements`, payload: JSON.stringify({ i, now }), qos: 1, retain: false, stampedAtMs: now - 1000 }, now);
        publisher.wake(id);
      }
    };

    // Healthy: messages acknowledged, watchdog fed.
    enqueue(3);
    await until(() => outbox.depth === 0, 'the first messages to be acknowledged');
    await sock.waitFor('WATCHDOG=1');

    // The broker stops acknowledging; the link and its keepalives stay up.
    proxy.swallow = true;
    enqueue(3);
    await until(() => proxy.swallowed >= 3, 'the broker to receive the messages');
    const stalled = await sock.waitFor('STATUS=stalled: mqtt-publish');
    expect(liveness.check().stale.map((s) => s.loop)).toEqual(['mqtt-publish']);
    expect(await watchdog.ping()).toBe(false);
    expect(connection.state).toBe('connected'); // not a dead link: a stall
    expect(outbox.depth).toBe(3); // nothing deleted without its PUBACK
    const stalledAt = sock.messages.indexOf(stalled);

    // What systemd's restart achieves: a new connection. The rows go again from SQLite.
    proxy.swallow = false;
    proxy.dropConnections();
    await until(() => outbox.depth === 0, 'the held messages to be acknowledged after the reconnect');
    await until(() => sock.messages.slice(stalledAt + 1).includes('STATUS=running'), 'the watchdog to report running again');
    const runningAt = stalledAt + 1 + sock.messages.slice(stalledAt + 1).indexOf('STATUS=running');
    await until(() => sock.messages.slice(runningAt + 1).includes('WATCHDOG=1'), 'the pings to resume');
    // Between the stall and the recovery: not a single ping.
    expect(sock.messages.slice(stalledAt + 1, runningAt)).not.toContain('WATCHDOG=1');
  });
});
