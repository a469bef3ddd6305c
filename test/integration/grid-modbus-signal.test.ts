// The Modbus control signal (grid/modbus-signal.ts) against the simulated control box
// (Debian's python3-pymodbus, test/helpers/control-box.py): a listener that throws on a
// reading taken by the poll timer is logged by the signal and the contacts are read on (no
// unhandled rejection escapes from the timer).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import type { Config, ModbusInputConfig } from '../../src/config/types.js';
import { controlSignalTypes } from '../../src/grid/index.js';
import type { ControlSignalSource, SignalReading } from '../../src/grid/control-signal.js';
import { freePort } from '../../src/free-port.js';
import { createLogger } from '../../src/log.js';
import { hasPymodbus } from '../helpers/peers.js';
import { until } from '../helpers/wait.js';

describe.skipIf(!hasPymodbus())('the Modbus control signal', () => {
  let box: ChildProcessWithoutNullStreams | null = null;
  let source: ControlSignalSource | null = null;
  afterAll(async () => {
    await source?.stop();
    box?.kill();
  });

  it('a listener that throws is logged and the contacts are read on', { timeout: 20_000 }, async () => {
    const port = await freePort();
    box = spawn('/usr/bin/python3', [join(__dirname, '../helpers/control-box.py'), String(port)]);
    const boxLines: string[] = [];
    createInterface({ input: box.stdout }).on('line', (l) => void boxLines.push(l));
    await until(() => boxLines.some((l) => l.startsWith('ready')), 'the control box listening');
    const logged: Array<{ level: number; msg: string }> = [];
    const logger = createLogger('info', new Writable({ write: (chunk, _enc, done) => (logged.push(JSON.parse(String(chunk))), done()) }));
    const config = { buses: [{ name: 'io', type: 'tcp', host: '127.0.0.1', tcp_port: port, timeout_ms: 500, retries: 0 }] } as unknown as Config;
    const input = { type: 'modbus', bus: 'io', unit_id: 1, addresses: [0], poll_ms: 50 } as ModbusInputConfig;
    source = (await controlSignalTypes().forType('modbus')!.load())({ config, input, logger, now: () => Date.now() });
    const readings: SignalReading[] = [];
    await source.start((r) => {
      readings.push(r);
      if (readings.length === 2) throw new Error('listener failed');
    });
    await until(() => readings.length >= 4, 'readings after the one whose listener threw');
    expect(readings.every((r) => r.kind === 'contacts')).toBe(true);
    expect(logged.filter((l) => l.msg === 'grid control: the contacts reading was not applied')).toHaveLength(1);
  });
});
