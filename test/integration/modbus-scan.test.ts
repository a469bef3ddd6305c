import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { validateConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/log.js';
import { parseUnitIds, scan } from '../../src/modbus/scan.js';
import { ORG } from '../helpers/poller-harness.js';
import { startSim } from '../helpers/sim-process.js';
import { removeDir, startPtyPair, type PtyPair } from '../helpers/socat.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});
async function pty(): Promise<PtyPair> {
  const p = await startPtyPair();
  cleanups.push(async () => {
    await p.stop();
    removeDir(p.dir);
  });
  return p;
}

describe('metergate scan against the simulator on a pty', () => {
  it('finds every unit id and identifies each profile', async () => {
    const pair = await pty();
    const sim = await startSim(['--serial', pair.b, '--unit', '2:sdm630,5:sdm120,9:sdm72d,11:em24,12:em24-e1,14:em340,17:abb-b23']);
    cleanups.push(() => sim.stop());
    const results = await scan({
      port: pair.a,
      settings: [{ baudRate: 9600, parity: 'even', stopBits: 1, dataBits: 8 }],
      unitIds: parseUnitIds('1-20'),
      timeoutMs: 300,
      logger: createLogger('silent'),
    });
    expect(results).toHaveLength(1);
    expect(results[0].devices.map((d) => [d.unitId, d.profile])).toEqual([
      [2, 'sdm630'],
      [5, 'sdm120'],
      [9, 'sdm72d'],
      [11, 'em24'],
      [12, 'em24-e1'],
      [14, 'em340'],
      [17, 'abb-b23'],
    ]);
    expect(results[0].devices.every((d) => d.identifiedBy === 'model-code')).toBe(true);
  });

  it('falls back to the register maps when a meter has no model code, and says when that is ambiguous', async () => {
    const pair = await pty();
    const sim = await startSim(['--serial', pair.b, '--no-model-code', '--unit', '1:abb-b23,2:em340,3:sdm630']);
    cleanups.push(() => sim.stop());
    const [result] = await scan({
      port: pair.a,
      settings: [{ baudRate: 9600, parity: 'even', stopBits: 1, dataBits: 8 }],
      unitIds: [1, 2, 3],
      timeoutMs: 300,
      logger: createLogger('silent'),
    });
    const [abb, cg, eastron] = result.devices;
    expect(abb).toMatchObject({ unitId: 1, profile: 'abb-b23', identifiedBy: 'voltage' });
    // the Carlo Gavazzi maps share their voltage registers but not their import counter
    expect(cg).toMatchObject({ unitId: 2, profile: null, identifiedBy: 'ambiguous' });
    expect(cg.candidates).toEqual(expect.arrayContaining(['em24', 'em24-e1', 'em340']));
    // SDM630/SDM72D/SDM120 too: the SDM120 has its power elsewhere
    expect(eastron).toMatchObject({ unitId: 3, profile: null, identifiedBy: 'ambiguous' });
    expect(eastron.candidates).toEqual(expect.arrayContaining(['sdm630', 'sdm72d', 'sdm120']));
  });

  it('prints a config snippet that passes validation', async () => {
    const pair = await pty();
    const sim = await startSim(['--serial', pair.b, '--unit', '1,3']);
    cleanups.push(() => sim.stop());
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'scan', '--port', pair.a, '--ids', '1-5', '--timeout', '300', '--baud', '9600,19200'], { cwd: root });
    expect(stderr).toContain('found unit 1 at 9600 even: sdm630 (model code 112)');
    const snippet = parse(stdout) as { buses: unknown[]; meters: Array<{ unit_id: number; profile: string; bus: string }> };
    // a pty has no baud rate, so both settings find the meters: two buses, each with both
    expect(snippet.buses).toHaveLength(2);
    expect(snippet.meters.map((m) => m.unit_id)).toEqual([1, 3, 1, 3]);
    const first = { buses: snippet.buses.slice(0, 1), meters: snippet.meters.slice(0, 2) };
    const config = validateConfig({ organization_id: ORG, ...first }, 'snippet', {});
    expect(config.meters.map((m) => m.profile)).toEqual(['sdm630', 'sdm630']);
  });

  it('scans behind a Modbus TCP gateway', async () => {
    const sim = await startSim(['--tcp', '0', '--unit', '2:em340,3']);
    cleanups.push(() => sim.stop());
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'scan', '--tcp', `127.0.0.1:${sim.ready.tcpPort}`, '--ids', '1-4', '--timeout', '300'], { cwd: root });
    const snippet = parse(stdout) as { buses: Array<Record<string, unknown>>; meters: Array<{ unit_id: number; profile: string }> };
    expect(snippet.buses).toEqual([{ name: 'gateway', type: 'tcp', host: '127.0.0.1', tcp_port: sim.ready.tcpPort }]);
    expect(snippet.meters.map((m) => [m.unit_id, m.profile])).toEqual([[2, 'em340'], [3, 'sdm630']]);
    validateConfig({ organization_id: ORG, ...snippet }, 'snippet', {});
  });

  it('parses unit id ranges', () => {
    expect(parseUnitIds('1-3,7,5-6')).toEqual([1, 2, 3, 5, 6, 7]);
    expect(parseUnitIds('1-247')).toHaveLength(247);
    expect(() => parseUnitIds('0-3')).toThrow();
    expect(() => parseUnitIds('200-300')).toThrow();
  });
});
