// The whole daemon reading two SML meters (German "moderne Messeinrichtung", binary push at
// 9600 8N1) from real recordings (test/data/sml: an EMH meter with power, an Iskra MT631
// without its PIN), each written to a socat pty; TLS mosquitto with password and ACL;
// /metrics, /status.json and /healthz over real HTTP. Bit errors and cut files are injected
// on the EMH line: dropped, counted, and never a value other than the recorded one published.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messageProblems } from '../../src/uplink/validate.js';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { freePort, hasMosquitto, startTlsBroker, type TlsBroker } from '../helpers/mosquitto.js';
import { hasSocat } from '../helpers/peers.js';
import { seriesValue } from '../helpers/prom-text.js';
import { startSmlMeter, type SmlMeter } from '../helpers/sml-meter.js';
import { removeDir, startPtyPair, type PtyPair } from '../helpers/socat.js';
import { subscribe, type Received, type TestSubscriber } from '../helpers/subscriber.js';
import { until } from '../helpers/wait.js';

const ORG = '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11';
const EMH = '5a0e6f1c-2b3d-4e5f-8a6b-7c8d9e0f1a2b';
const ISKRA = '6b1f7a2d-3c4e-4f60-9b7c-8d9e0f1a2b3c';
const POLL_MS = 1000;

type Metrics = Record<string, [number, string]>;
const sampledAt = (m: Received) => Date.parse((m.json.data as { sampled_at: string }).sampled_at);
const metricsOf = (m: Received): Metrics => Object.fromEntries((m.json.data as { metrics: Array<{ name: string; value: number; unit: string }> }).metrics.map((x) => [x.name, [x.value, x.unit]]));

/** What the recorded files say (test/unit/p1-sml.test.ts reads them byte by byte). */
const EMH_METRICS: Metrics = { total_active_power: [563.5, 'W'], active_energy_import: [15338555.7, 'Wh'] };
const ISKRA_METRICS: Metrics = { active_energy_import: [2043000, 'Wh'], active_energy_export: [0, 'Wh'] };

describe.skipIf(!hasMosquitto || !hasSocat)('daemon reading SML meters on their optical interface', () => {
  let broker: TlsBroker;
  let dir: string;
  const lines: PtyPair[] = [];
  const meters: SmlMeter[] = [];
  let emhMeter: SmlMeter;
  let daemon: DaemonProcess | undefined;
  let sub: TestSubscriber | undefined;
  let base = '';
  const scrape = async () => (await fetch(`${base}/metrics`)).text();
  const files = async (outcome: string) => seriesValue(await scrape(), 'metergate_p1_telegrams_total', { bus: 'sml-emh', outcome }) ?? 0;
  const of = (rid: string, type: string) => sub!.messages.filter((m) => m.topic === `svc/resources/${rid}/${type}`);

  beforeAll(async () => {
    broker = await startTlsBroker([
      { username: 'gateway', password: 'gw-secret', acl: ['topic write svc/resources/#'] },
      { username: 'cloud', password: 'cloud-secret', acl: ['topic read svc/resources/#'] },
    ]);
    dir = mkdtempSync(join(tmpdir(), 'mg-sml-'));
    lines.push(await startPtyPair(), await startPtyPair());
    emhMeter = await startSmlMeter(lines[0]!.b, 'emh.hex');
    meters.push(emhMeter, await startSmlMeter(lines[1]!.b, 'iskra_mt631_without_pin.hex'));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const config = join(dir, 'config.yaml');
    writeFileSync(
      config,
      `organization_id: ${ORG}
data_dir: ${dir}/data
log_level: info
poll: { interval_ms: ${POLL_MS} }
buses:
  - { name: sml-emh, type: p1, port: ${lines[0]!.a}, line: 9600 8N1 }
  - { name: sml-iskra, type: p1, port: ${lines[1]!.a}, line: 9600 8N1 }
meters:
  - { resource_id: ${EMH}, bus: sml-emh }
  - { resource_id: ${ISKRA}, bus: sml-iskra }
mqtt:
  url: ${broker.url}
  username: gateway
  password: gw-secret
  ca_file: ${broker.caFile}
  heartbeat_interval_ms: 2000
clock: { trust: system }
http: { host: 127.0.0.1, port: ${port} }
prices: { source: none }
forecast: { enabled: false }
`,
    );
    sub = await subscribe({ url: broker.url, caFile: broker.caFile, username: 'cloud', password: 'cloud-secret', topic: 'svc/resources/+/+' });
    daemon = await startDaemon(config);
  }, 120_000);

  afterAll(async () => {
    await sub?.close();
    await daemon?.stop();
    for (const m of meters) await m.stop();
    for (const l of lines) {
      await l.stop();
      removeDir(l.dir);
    }
    await broker?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('publishes the recorded values under the DSMR/Modbus metric names, schema-valid, and names each meter in its boot_notification', { timeout: 90_000 }, async () => {
    await sub!.waitFor(
      () => of(EMH, 'measurements').length >= 3 && of(ISKRA, 'measurements').length >= 3 && of(EMH, 'boot_notifications').length >= 1 && of(ISKRA, 'boot_notifications').length >= 1,
      'measurements and boot notifications of both SML meters',
      60_000,
    );
    for (const m of [...of(EMH, 'measurements'), ...of(ISKRA, 'measurements')]) expect(messageProblems('measurement', m.json)).toEqual([]);
    for (const m of of(EMH, 'measurements')) expect(metricsOf(m)).toEqual(EMH_METRICS);
    for (const m of of(ISKRA, 'measurements')) expect(metricsOf(m)).toEqual(ISKRA_METRICS);
    const boot = (rid: string) => of(rid, 'boot_notifications')[0]!.json;
    expect(messageProblems('boot_notification', boot(EMH))).toEqual([]);
    expect(boot(EMH).meter).toEqual({ profile: 'dsmr', vendor: 'EMH metering', model: 'SML meter', unit_id: 1, bus: 'sml-emh', serial_number: '1EMH0004321349', firmware: null });
    expect(boot(ISKRA).meter).toMatchObject({ vendor: 'Iskraemeco', serial_number: '1ISK0075126084' });
  });

  it('the meter without its PIN is online, publishes its energy, and /status.json and /healthz say why power is absent', { timeout: 60_000 }, async () => {
    const status = async () => ((await (await fetch(`${base}/status.json`)).json()) as { meters: Array<{ resource_id: string; state: string; problem: string | null }> }).meters;
    await until(async () => (await status()).some((m) => m.resource_id === ISKRA && m.state === 'online'), 'the Iskra meter online', 30_000);
    const [iskra] = (await status()).filter((m) => m.resource_id === ISKRA);
    expect(iskra!.problem).toMatch(/^no power in the meter's data, only active_energy_import, active_energy_export: .*no PIN entered/);
    expect((await status()).find((m) => m.resource_id === EMH)!.problem).toBeNull();
    const health = (await (await fetch(`${base}/healthz`)).json()) as { components: { meters: { status: string; reason: string } } };
    expect(health.components.meters.status).toBe('degraded');
    expect(health.components.meters.reason).toMatch(/sml-iskra\/1 \(no power in the meter's data/);
  });

  it('bit errors and cut files on the line are dropped and counted; only the recorded values are published meanwhile', { timeout: 90_000 }, async () => {
    const crcBefore = await files('crc');
    const cutBefore = (await files('truncated')) + (await files('garbled'));
    const from = Date.now();
    // Every second file: one bit flipped at a varying place; every fifth cut short.
    emhMeter.damage((file, n) => {
      const out = Buffer.from(file);
      if (n % 5 === 0) return out.subarray(0, 20 + ((n * 37) % (out.length - 40)));
      if (n % 2 === 0) out[8 + ((n * 53) % (out.length - 16))]! ^= 1 << n % 8;
      return out;
    });
    await until(async () => (await files('crc')) - crcBefore >= 5, 'five files dropped for their CRC', 60_000);
    await until(async () => (await files('truncated')) + (await files('garbled')) - cutBefore >= 2, 'two cut files dropped', 60_000);
    await until(() => of(EMH, 'measurements').filter((m) => sampledAt(m) > from).length >= 3, 'EMH measurements between the errors', 60_000);
    emhMeter.damage(null);
    for (const m of of(EMH, 'measurements')) expect(metricsOf(m)).toEqual(EMH_METRICS);
  });
});
