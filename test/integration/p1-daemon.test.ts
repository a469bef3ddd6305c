// The whole daemon with two meter sources at once, against real peers: a simulated SDM630 on
// a Modbus RTU pty and a simulated DSMR 5 smart meter replaying a real telegram
// (../shared/data/dsmr/v5.txt, read in place) on a P1 pty behind a tap that injects bit
// errors and cuts telegrams; mosquitto with TLS, password and ACL; /metrics over real HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messageProblems } from '../../src/uplink/validate.js';
import { DSMR_V5_METRICS } from '../helpers/dsmr-v5.js';
import { cloudUser, GATEWAY_USER, startMeterRig, type MeterRig, type RigMeter } from '../helpers/meter-rig.js';
import { hasMosquitto } from '../helpers/mosquitto.js';
import { hasSocat } from '../helpers/peers.js';
import { seriesValue } from '../helpers/prom-text.js';
import { hasSharedData, sharedData } from '../helpers/shared-data.js';
import type { TappedLine } from '../helpers/socat.js';
import type { Received, TestSubscriber } from '../helpers/subscriber.js';
import { until } from '../helpers/wait.js';

const MODBUS_METER = '0b7e3f4c-1d2a-4e5f-8a9b-0c1d2e3f4a5b';
const P1_METER = '7c8d9e0f-1a2b-4c3d-8e4f-5a6b7c8d9e0f';
/** The gas meter on the P1 meter's M-Bus channel 1, published as a resource of its own. */
const GAS = '1b2c3d4e-5f60-4718-8a9b-0c1d2e3f4a5b';
const POLL_MS = 1000;

type Metrics = Record<string, [number, string]>;
const sampledAt = (m: Received) => Date.parse((m.json.data as { sampled_at: string }).sampled_at);
const metricsOf = (m: Received): Metrics => Object.fromEntries((m.json.data as { metrics: Array<{ name: string; value: number; unit: string }> }).metrics.map((x) => [x.name, [x.value, x.unit]]));

describe.skipIf(!hasMosquitto || !hasSocat || !hasSharedData)('daemon with a Modbus bus and a DSMR P1 port at once', () => {
  let rig: MeterRig;
  let sub: TestSubscriber;
  let modbusLine: RigMeter;
  let p1Line: TappedLine;
  let base = '';
  let startedAtMs = 0;
  const scrape = async () => (await fetch(`${base}/metrics`)).text();
  const telegrams = async (outcome: string) => seriesValue(await scrape(), 'metergate_p1_telegrams_total', { bus: 'p1-port', outcome }) ?? 0;
  const p1Measurements = () => sub.messages.filter((m) => m.topic === `svc/resources/${P1_METER}/measurements`);

  /** What the simulated meter can have sent by `atMs`: the captured telegram, tariff 1 advanced by its 244 W. */
  function expectWholeTelegram(m: Received): void {
    const metrics = metricsOf(m);
    const { active_energy_import: [startWh, importUnit], ...unchanged } = DSMR_V5_METRICS;
    expect(metrics).toMatchObject(unchanged);
    expect(Object.keys(metrics)).toHaveLength(Object.keys(DSMR_V5_METRICS).length);
    const [importWh, unit] = metrics.active_energy_import;
    expect(unit).toBe(importUnit);
    // The telegram's 6825 Wh at the start of the replay, + its 244 W since (the meter writes whole Wh).
    const [powerW] = DSMR_V5_METRICS.total_active_power;
    const maxWh = startWh + (powerW * (sampledAt(m) - startedAtMs + 60_000)) / 3_600_000;
    expect(importWh).toBeGreaterThanOrEqual(startWh);
    expect(importWh).toBeLessThanOrEqual(Math.ceil(maxWh));
  }

  beforeAll(async () => {
    rig = await startMeterRig({
      tmpPrefix: 'mg-p1-',
      broker: { users: [GATEWAY_USER, cloudUser()] },
      meters: [
        { line: 'pty', args: ['--unit', '1'] },
        // A DSMR 5 meter sends every second; here four times a second, to show the gateway samples.
        { line: 'tapped-pty', args: ['--p1', sharedData('dsmr/v5.txt'), '--p1-period-ms', '250'] },
      ],
      http: true,
      config: ({ meters }) => ({
        poll: { interval_ms: POLL_MS },
        buses: [
          { name: 'rs485', type: 'rtu', port: meters[0].port, baud_rate: 9600, parity: 'even', timeout_ms: 300 },
          { name: 'p1-port', type: 'p1', port: meters[1].port },
        ],
        meters: [
          { resource_id: MODBUS_METER, bus: 'rs485', unit_id: 1, profile: 'sdm630' },
          { resource_id: P1_METER, bus: 'p1-port', channels: { 1: GAS } },
        ],
        mqtt: { heartbeat_interval_ms: 2000 },
      }),
      subscriber: { username: 'cloud', topic: 'svc/resources/+/+' },
    });
    sub = rig.sub;
    modbusLine = rig.meters[0];
    p1Line = rig.meters[1].tap!;
    startedAtMs = rig.meters[1].startedAtMs;
    base = rig.httpBase;
  }, 120_000);

  afterAll(async () => {
    await rig?.stop();
  });

  it('both meters publish schema-valid measurements; the P1 one carries the telegram mapped to the contract names', { timeout: 90_000 }, async () => {
    const of = (rid: string, type: string) => sub.messages.filter((m) => m.topic === `svc/resources/${rid}/${type}`);
    await sub.waitFor(
      () => of(P1_METER, 'measurements').length >= 4 && of(MODBUS_METER, 'measurements').length >= 4 && of(P1_METER, 'heartbeats').length >= 1,
      'measurements of both meters and a P1 heartbeat',
      60_000,
    );
    for (const m of [...of(P1_METER, 'measurements'), ...of(MODBUS_METER, 'measurements')]) expect(messageProblems('measurement', m.json)).toEqual([]);
    for (const m of of(P1_METER, 'measurements')) expectWholeTelegram(m);
    const imports = of(P1_METER, 'measurements').map((m) => metricsOf(m).active_energy_import[0]);
    expect(imports).toEqual([...imports].sort((a, b) => a - b));
    expect(metricsOf(of(MODBUS_METER, 'measurements')[0])).toHaveProperty('total_active_power');
  });

  it('boot_notification names the meter from its identification line; network_scan lists both buses', { timeout: 60_000 }, async () => {
    await sub.waitFor((all) => all.some((m) => m.topic === `svc/resources/${P1_METER}/boot_notifications`) && all.some((m) => m.topic === `svc/resources/${P1_METER}/network_scans`), 'boot notification and network scan', 40_000);
    const boot = sub.messages.find((m) => m.topic === `svc/resources/${P1_METER}/boot_notifications`)!;
    expect(messageProblems('boot_notification', boot.json)).toEqual([]);
    expect(boot.json.meter).toEqual({ profile: 'dsmr', vendor: 'Iskraemeco', model: 'MT382-1000', unit_id: 1, bus: 'p1-port', serial_number: 'K8EG004046395507', firmware: 'DSMR 5.0' });
    await until(() => {
      const scans = sub.messages.filter((m) => m.topic === `svc/resources/${P1_METER}/network_scans`);
      const last = scans.at(-1)?.json as { modbus: Array<{ bus: string; unit_ids: number[] }> } | undefined;
      return (last?.modbus ?? []).filter((b) => b.unit_ids.length === 1).length === 2;
    }, 'a network scan with both buses answering', 40_000);
    const scan = sub.messages.filter((m) => m.topic === `svc/resources/${P1_METER}/network_scans`).at(-1)!;
    expect(messageProblems('network_scan', scan.json)).toEqual([]);
    expect((scan.json as { modbus: unknown }).modbus).toEqual([
      { bus: 'p1-port', port: p1Line.gatewaySide, unit_ids: [1], devices: [{ unit_id: 1, profile: 'dsmr' }] },
      { bus: 'rs485', port: modbusLine.port, unit_ids: [1], devices: [{ unit_id: 1, profile: 'sdm630' }] },
    ]);
  });

  it('the M-Bus gas meter is a resource of its own: its reading once per capture time (a 5-minute mark), heartbeats, and a boot_notification naming its device type and id', { timeout: 60_000 }, async () => {
    const of = (type: string) => sub.messages.filter((m) => m.topic === `svc/resources/${GAS}/${type}`);
    await sub.waitFor(() => of('measurements').length >= 1 && of('boot_notifications').length >= 1 && of('heartbeats').length >= 1, 'a gas measurement, boot notification and heartbeat', 40_000);
    const boot = of('boot_notifications')[0];
    expect(messageProblems('boot_notification', boot.json)).toEqual([]);
    expect(boot.json.meter).toEqual({ profile: 'dsmr-mbus', vendor: 'unknown', model: 'M-Bus gas meter (device type 3, channel 1)', unit_id: 1, bus: 'p1-port', serial_number: '2222ABCD123456789', firmware: null });
    // Meanwhile several electricity measurements; the gas reading is not re-sent while its capture time stands.
    const electricityBefore = p1Measurements().length;
    await until(() => p1Measurements().length >= electricityBefore + 3, 'three more electricity measurements', 30_000);
    const gas = of('measurements');
    for (const m of gas) {
      expect(messageProblems('measurement', m.json)).toEqual([]);
      expect(metricsOf(m)).toEqual({ gas_volume: [0.107, 'm3'] });
      expect(sampledAt(m) % 300_000).toBe(0);
    }
    expect(new Set(gas.map(sampledAt)).size).toBe(gas.length);
  });

  it('publishes at the poll cadence, not at the meter\'s: four telegrams a second, one measurement per slot', { timeout: 60_000 }, async () => {
    const okBefore = await telegrams('ok');
    const from = Date.now();
    await until(() => p1Measurements().filter((m) => sampledAt(m) > from).length >= 6, 'six more P1 measurements', 40_000);
    const seenAtMs = Date.now();
    const recent = p1Measurements().filter((m) => sampledAt(m) > from);
    // At most one per poll slot that began in the window (a slot fires once, late or not).
    expect(recent.length).toBeLessThanOrEqual(Math.floor(seenAtMs / POLL_MS) - Math.floor(from / POLL_MS) + 1);
    expect(new Set(recent.map(sampledAt)).size).toBe(recent.length);
    // ...while the meter sent four a second.
    expect((await telegrams('ok')) - okBefore).toBeGreaterThan(recent.length * 2);
  });

  it('bit errors: every damaged telegram is dropped and counted, what is published is whole, the Modbus meter is not disturbed', { timeout: 90_000 }, async () => {
    const crcBefore = await telegrams('crc');
    const from = Date.now();
    let flips = 0;
    // Half of the chunks towards the gateway get one bit flipped.
    p1Line.mangle((chunk, towardsGateway) => {
      if (!towardsGateway || chunk.length === 0 || Math.random() < 0.5) return chunk;
      const out = Buffer.from(chunk);
      const i = Math.floor(Math.random() * out.length);
      out[i] ^= 1 << Math.floor(Math.random() * 7);
      flips++;
      return out;
    });
    await until(async () => (await telegrams('crc')) - crcBefore >= 5, 'five telegrams dropped for their CRC', 60_000);
    await until(() => p1Measurements().filter((m) => sampledAt(m) > from).length >= 3, 'P1 measurements between the errors', 60_000);
    p1Line.mangle(null);
    expect(flips).toBeGreaterThan(0);
    for (const m of p1Measurements().filter((x) => sampledAt(x) > from)) expectWholeTelegram(m);
    await until(() => sub.messages.filter((m) => m.topic === `svc/resources/${MODBUS_METER}/measurements` && sampledAt(m) > from).length >= 2, 'Modbus measurements meanwhile', 30_000);
  });

  it('cut telegrams (bytes lost on the line) are dropped whole and counted', { timeout: 90_000 }, async () => {
    const lostBefore = (await telegrams('truncated')) + (await telegrams('garbled')) + (await telegrams('crc'));
    const from = Date.now();
    let n = 0;
    // Every third chunk towards the gateway is lost, and the rest of one of its chunks each time.
    p1Line.mangle((chunk, towardsGateway) => {
      if (!towardsGateway) return chunk;
      n++;
      if (n % 3 === 0) return Buffer.alloc(0);
      if (n % 3 === 1 && chunk.length > 8) return chunk.subarray(0, Math.floor(chunk.length / 2));
      return chunk;
    });
    await until(async () => (await telegrams('truncated')) + (await telegrams('garbled')) + (await telegrams('crc')) - lostBefore >= 5, 'five cut telegrams counted', 60_000);
    p1Line.mangle(null);
    const resumedAt = Date.now();
    await until(() => p1Measurements().filter((m) => sampledAt(m) > resumedAt).length >= 2, 'P1 measurements after the line is clean again', 60_000);
    for (const m of p1Measurements().filter((x) => sampledAt(x) > from)) expectWholeTelegram(m);
    expect(await telegrams('truncated')).toBeGreaterThan(0);
  });
});
