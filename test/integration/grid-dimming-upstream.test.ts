// The dimming evidence upstream and a lost signal held (docs/grid-limits.md): the grid control
// (grid/grid-control.ts) reads a simulated control box, a Modbus TCP I/O module (Debian's
// python3-pymodbus, test/helpers/control-box.py), on the real clock, and sends each phase of a
// dimming event through the real outbox and publisher to a TLS mosquitto where the gateway may
// write only under the site meter's resource: the cloud, subscribed to that resource's
// grid_dimming_events, receives started, confirmed (no charger is controlled here, so at
// once) and ended, valid by their schema, QoS 1, not retained; the four contract topics see
// nothing of it (their messages stay as they are). The box then stops answering: with on_signal_lost hold-last the site stays
// undimmed, the signal is lost and /healthz's component says why.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import type { AppContext } from '../../src/context.js';
import { buildUplink, createContext, type Uplink } from '../../src/daemon.js';
import { dimmingPublisher } from '../../src/composition/grid.js';
import { GridControl } from '../../src/grid/grid-control.js';
import { controlSignalTypes } from '../../src/grid/index.js';
import { createLogger } from '../../src/log.js';
import { freePort } from '../../src/free-port.js';
import { DimmingStore } from '../../src/store/grid-dimming.js';
import { messageProblems } from '../../src/uplink/validate.js';
import { hasMosquitto, startTlsBroker, type TlsBroker } from '../helpers/mosquitto.js';
import { hasPymodbus } from '../helpers/peers.js';
import { subscribe, type TestSubscriber } from '../helpers/subscriber.js';
import { until } from '../helpers/wait.js';

const ORG = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
const SITE_METER = '5d8e2b71-9c4a-4f03-b6e2-1a7c3d9e0f42';

describe.skipIf(!(hasPymodbus() && hasMosquitto))('dimming events upstream, and a lost control signal held', () => {
  let broker: TlsBroker;
  let cloud: TestSubscriber;
  let everything: TestSubscriber;
  let box: ChildProcessWithoutNullStreams;
  const boxLines: string[] = [];
  let dir: string;
  let ctx: AppContext;
  let uplink: Uplink;
  let control: GridControl;

  const setContact = async (bits: string) => {
    const before = boxLines.length;
    box.stdin.write(`${bits}\n`);
    await until(() => boxLines.slice(before).includes(`set ${bits}`), `the control box set ${bits}`);
  };

  beforeAll(async () => {
    const boxPort = await freePort();
    box = spawn('/usr/bin/python3', [join(__dirname, '../helpers/control-box.py'), String(boxPort)]);
    createInterface({ input: box.stdout }).on('line', (l) => void boxLines.push(l));
    await until(() => boxLines.includes(`ready ${boxPort}`), 'the control box listening', 20_000);
    broker = await startTlsBroker([
      { username: 'gateway', password: 'gw-secret', acl: [`topic write svc/resources/${SITE_METER}/#`] },
      { username: 'cloud', password: 'cloud-secret', acl: [`topic read svc/resources/${SITE_METER}/#`] },
    ]);
    cloud = await subscribe({ url: broker.url, caFile: broker.caFile, username: 'cloud', password: 'cloud-secret', topic: `svc/resources/${SITE_METER}/grid_dimming_events` });
    everything = await subscribe({ url: broker.url, caFile: broker.caFile, username: 'cloud', password: 'cloud-secret', topic: `svc/resources/${SITE_METER}/#` });
    dir = mkdtempSync(join(tmpdir(), 'mg-dimming-upstream-'));
    const config = validateConfig(
      {
        organization_id: ORG,
        data_dir: join(dir, 'data'),
        buses: [{ name: 'io', type: 'tcp', host: '127.0.0.1', tcp_port: boxPort, timeout_ms: 300, retries: 0 }],
        meters: [{ resource_id: SITE_METER, bus: 'io', unit_id: 2, profile: 'sdm630' }],
        site: { meter: SITE_METER },
        clock: { trust: 'system' },
        mqtt: { url: broker.url, username: 'gateway', password: 'gw-secret', ca_file: broker.caFile, client_id: 'gw-dimming', reconnect_min_ms: 100, reconnect_max_ms: 500 },
        chargers: [{ id: 'CP-A', password: 'charger-secret-0123456789', auth: 'accept_all', connectors: [{ connector_id: 1, default_target: { departure_local_time: '18:00', energy_wh: 30000 } }] }],
        grid_control: { input: { type: 'modbus', bus: 'io', unit_id: 1, addresses: [0], poll_ms: 100, debounce_ms: 50 }, on_signal_lost: 'hold-last', reaction_deadline_s: 10 },
      },
      'test',
      {},
    );
    ctx = createContext(config, { logger: createLogger(process.env.TEST_LOG ?? 'fatal') });
    uplink = buildUplink(ctx);
    for (const m of uplink.modules) await m.start();
    const settings = config.grid_control!;
    const source = (await controlSignalTypes().forType('modbus')!.load())({ config, input: settings.input, logger: ctx.logger, now: () => ctx.clock.now() });
    const publish = await dimmingPublisher(ctx, uplink.recorder);
    control = new GridControl(ctx, { source, fuseConnectors: () => [], chargePoints: 1, ...(publish ? { publish } : {}) });
    await control.start();
  }, 60_000);

  afterAll(async () => {
    await control?.stop();
    for (const m of [...(uplink?.modules ?? [])].reverse()) await m.stop();
    ctx?.db.close();
    await cloud?.close();
    await everything?.close();
    await broker?.stop();
    if (box && box.exitCode === null) box.kill('SIGKILL');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('sends each phase of an event on its own topic, and holds the last state when the box falls silent', { timeout: 60_000 }, async () => {
    await until(() => control.view().signal === 'read', 'the contact read');
    expect(control.view()).toMatchObject({ dimmed: false, limit_w: null, minimum_w: 4200, contacts: [false] });
    await setContact('1');
    await until(() => control.view().dimmed, 'dimmed');
    await setContact('0');
    await until(() => !control.view().dimmed, 'the dimming ended');
    await cloud.waitFor((all) => all.some((m) => m.json.phase === 'ended'), 'the ended phase upstream', 20_000);
    expect(cloud.messages.map((m) => m.json.phase)).toEqual(['started', 'confirmed', 'ended']);
    for (const m of cloud.messages) {
      expect(messageProblems('grid_dimming_event', m.json)).toEqual([]);
      expect(m.retain).toBe(false);
      expect(m.json).toMatchObject({ resource_id: SITE_METER, organization_id: ORG, limit_w: 4200, cause: 'signal', late: false });
    }
    const [event] = new DimmingStore(ctx.db).between(0, Date.now() + 1, 10);
    expect(cloud.messages.every((m) => m.json.event_id === event!.id)).toBe(true);
    expect(event!.endedAtMs).not.toBeNull();
    expect(cloud.messages[2]!.json.ended_at).toBe(new Date(event!.endedAtMs!).toISOString());
    // Nothing of it on the contract's four topics (the uplink's boot_notification goes on as before).
    const others = everything.messages.filter((m) => !m.topic.endsWith('/grid_dimming_events'));
    expect(others.every((m) => m.json.message_type !== 'grid_dimming_event' && messageProblems(m.json.message_type as 'heartbeat', m.json).length === 0)).toBe(true);

    // The box stops answering: hold-last keeps the site undimmed, and says the signal is lost.
    box.kill('SIGKILL');
    await until(() => control.view().signal === 'lost', 'the signal lost', 20_000);
    expect(control.view()).toMatchObject({ dimmed: false, on_signal_lost: 'hold-last' });
    expect(control.views.health!['grid_control']!()).toMatchObject({ status: 'degraded' });
    expect(new DimmingStore(ctx.db).between(0, Date.now() + 1, 10)).toHaveLength(1);
  });
});
