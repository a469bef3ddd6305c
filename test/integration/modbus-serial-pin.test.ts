// modbus-serial is pinned exactly in package.json because src/modbus/bus.ts reaches into a
// private field: the buffered RTU port's receive buffer (`client._port._buffer`), emptied
// before each request so stray bytes from a previous, timed-out answer are not parsed as
// the next one. This test fails when an upgrade renames or drops that field.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { SerialPort } from 'serialport';
import type { ModbusRTU as ModbusClient } from 'modbus-serial/ModbusRTU.js';
import { afterEach, describe, expect, it } from 'vitest';
import { hasSocat } from '../helpers/peers.js';
import { startPtyPair, type PtyPair } from '../helpers/socat.js';
import { until } from '../helpers/wait.js';

const require = createRequire(import.meta.url);
// CommonJS with `module.exports = ModbusRTU`, loaded as src/modbus/bus.ts does.
const ModbusRTU = require('modbus-serial') as typeof ModbusClient;

describe('modbus-serial pin', () => {
  it('package.json pins modbus-serial to exactly the installed version', () => {
    const pinned = (JSON.parse(readFileSync('package.json', 'utf8')) as { dependencies: Record<string, string> }).dependencies['modbus-serial'];
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
    const installed = (JSON.parse(readFileSync(require.resolve('modbus-serial/package.json'), 'utf8')) as { version: string }).version;
    expect(installed).toBe(pinned);
  });
});

describe.skipIf(!hasSocat)('modbus-serial private receive buffer over a pty', () => {
  let pair: PtyPair | undefined;
  let client: ModbusClient | undefined;
  let meterSide: SerialPort | undefined;
  afterEach(async () => {
    await new Promise<void>((r) => (client ? client.close(() => r()) : r()));
    await new Promise<void>((r) => (meterSide?.isOpen ? meterSide.close(() => r()) : r()));
    await pair?.stop();
  });

  it('stray bytes land in client._port._buffer, the field bus.ts empties', async () => {
    pair = await startPtyPair();
    client = new ModbusRTU();
    await client.connectRTUBuffered(pair.a, { baudRate: 9600, parity: 'even', dataBits: 8, stopBits: 1 });
    const port = (client as unknown as { _port?: { _buffer?: unknown } })._port;
    expect(port, 'modbus-serial no longer has client._port').toBeDefined();
    expect(Buffer.isBuffer(port!._buffer), 'modbus-serial no longer keeps its receive buffer in _port._buffer').toBe(true);

    // Bytes nobody asked for (a late answer to a timed-out request) stay in that buffer.
    meterSide = new SerialPort({ path: pair.b, baudRate: 9600, parity: 'even' });
    await new Promise<void>((resolve, reject) => meterSide!.once('open', resolve).once('error', reject));
    meterSide.write(Buffer.from([0x01, 0x03, 0x02]));
    await until(() => (port!._buffer as Buffer).length === 3, 'the stray bytes in _port._buffer', 30_000);
    expect([...(port!._buffer as Buffer)]).toEqual([0x01, 0x03, 0x02]);
  });
});
