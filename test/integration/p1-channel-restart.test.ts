// An M-Bus gas channel across a restart of `metergate run`: the plausibility reference is the
// last reading the store kept, so a register that went backwards while the gateway was down is
// refused (counted, named on /status.json, not stored), and a replaced meter is still believed
// after three readings that agree. The electricity meter likewise: its import register lower
// after the restart is dropped as energy_backwards until the third reading believes it. The meter is the recorded DSMR 5 telegram
// (../shared/data/dsmr/v5.txt, read in place) behind a TCP serial bridge in this process, its
// gas line set to each step in turn (capture times 5 minutes apart), CRC recomputed.
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dsmrCrcHex } from '../../src/p1/crc.js';
import { openDatabase } from '../../src/store/db.js';
import { ReadingsStore } from '../../src/store/readings.js';
import { dutchTimestamp } from '../../src/sim/p1-telegrams.js';
import { startMeterRig, type MeterRig } from '../helpers/meter-rig.js';
import { METER_A } from '../helpers/poller-harness.js';
import { seriesValue } from '../helpers/prom-text.js';
import { hasSharedData, sharedData } from '../helpers/shared-data.js';
import { until } from '../helpers/wait.js';

const GAS = '3d4e5f60-7182-4a3b-8cad-2e3f4a5b6c7d';

describe.skipIf(!hasSharedData)('an M-Bus channel across a daemon restart', () => {
  let rig: MeterRig | undefined;
  const clients = new Set<Socket>();
  let timer: NodeJS.Timeout | undefined;
  const server = createServer((socket) => void clients.add(socket.on('error', () => undefined).on('close', () => clients.delete(socket))));

  afterAll(async () => {
    await rig?.stop();
    clearInterval(timer);
    for (const socket of clients) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('a gas register lower after the restart than before it is refused; a replaced meter is believed at its third reading', { timeout: 180_000 }, async () => {
    const template = readFileSync(sharedData('dsmr/v5.txt'), 'latin1').replace(/!.*$/s, '!');
    const base = Math.floor(Date.now() / 300_000) * 300_000 - 3_600_000;
    // [minutes after base, m3]: before the restart, then the register 1 m3 lower (a replaced meter, or a garbled one), rising slowly.
    const steps: Array<[number, number]> = [[0, 100], [5, 99], [10, 99.01], [15, 99.02]];
    let step = 0;
    const telegram = () => {
      const [minutes, m3] = steps[step]!;
      const body = template
        .replace(/^0-0:1\.0\.0\(\d{12}[SW]\)/m, `0-0:1.0.0(${dutchTimestamp(Date.now())})`)
        .replace(/^0-1:24\.2\.1\(.*$/m, `0-1:24.2.1(${dutchTimestamp(base + minutes * 60_000)})(${m3.toFixed(3).padStart(9, '0')}*m3)`)
        // After the restart tariff 1 reads 3 kWh instead of the recorded 4.426 (a replaced meter).
        .replace(/^1-0:1\.8\.1\(.*$/m, step === 0 ? '$&' : '1-0:1.8.1(000003.000*kWh)');
      return `${body}${dsmrCrcHex(body)}\r\n`;
    };
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    timer = setInterval(() => {
      for (const socket of clients) socket.write(telegram(), 'latin1');
    }, 250);

    rig = await startMeterRig({
      tmpPrefix: 'mg-p1-restart-',
      http: true,
      config: () => ({
        poll: { interval_ms: 1000 },
        buses: [{ name: 'p1', type: 'p1-tcp', host: '127.0.0.1', tcp_port: (server.address() as AddressInfo).port }],
        meters: [{ resource_id: METER_A, bus: 'p1', channels: { 1: GAS } }],
      }),
      startDaemon: false,
    });
    const first = await rig.startDaemon();
    // The store as the daemon writes it (WAL: read beside it).
    const db = openDatabase(join(rig.dataDir, 'metergate.db'));
    rig.defer(() => db.close());
    const readings = new ReadingsStore(db);
    const gas = () => readings.newest(GAS, 10).map((r) => [r.sampledAtMs - base, r.metrics.find((m) => m.name === 'gas_volume')?.value]);
    await until(() => gas().length === 1, 'the first gas reading stored', 60_000);
    expect(await first.stop()).toBe(0);

    step = 1;
    await rig.startDaemon();
    const scrape = async () => (await fetch(`${rig!.httpBase}/metrics`)).text();
    const dropped = async () => seriesValue(await scrape(), 'metergate_meter_samples_dropped_total', { resource_id: GAS, reason: 'channel_backwards' }) ?? 0;
    await until(async () => (await dropped()) >= 1, 'the lower reading after the restart refused', 60_000);
    const status = (await (await fetch(`${rig.httpBase}/status.json`)).json()) as { meters: Array<{ resource_id: string; problem: string | null }> };
    expect(status.meters.find((m) => m.resource_id === GAS)!.problem).toMatch(/^channel 1: reading not published, implausible: gas_volume went from 100 to 99 /);
    // The electricity import (4426 + 2399 Wh before, 3000 + 2399 after): two dropped, the third believed.
    const importWh = () => readings.newest(METER_A, 1).map((r) => r.metrics.find((m) => m.name === 'active_energy_import')?.value)[0];
    await until(() => importWh() === 5399, 'the lower electricity import believed at its third reading', 60_000);
    expect(seriesValue(await scrape(), 'metergate_meter_samples_dropped_total', { resource_id: METER_A, reason: 'energy_backwards' })).toBe(2);

    // Readings that agree with each other: the third is believed (a replaced meter).
    step = 2;
    await until(async () => (await dropped()) >= 2, 'the second lower reading refused too', 60_000);
    step = 3;
    await until(() => gas().length === 2, 'the third lower reading believed and stored', 60_000);
    expect(gas()).toEqual([
      [15 * 60_000, 99.02],
      [0, 100],
    ]);
    expect(await dropped()).toBe(2);
  });
});
