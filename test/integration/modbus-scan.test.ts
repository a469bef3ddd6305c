import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { validateConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/log.js';
import { parseUnitIds, scan } from '../../src/modbus/scan.js';
import { ORG } from '../helpers/poller-harness.js';
import { startSim } from '../helpers/sim-process.js';
import { removeDir, startPtyPair, type PtyPair } from '../helpers/socat.js';
import { cleanupsAfterEach } from '../helpers/cleanups.js';
import { isRoot } from '../helpers/peers.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const cleanups = cleanupsAfterEach();
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

  // stty reads the termios of a port the scanner holds with TIOCEXCL: only root may open it then.
  it.skipIf(!isRoot)('sweeps baud rates and parities: finds the meters only at their line setting and prints one bus to paste', async () => {
    const pair = await pty();
    // Meters set to 19200 8E1 (the simulator stays silent unless the scanner's end is set so).
    const sim = await startSim(['--serial', pair.b, '--unit', '1,3:sdm120', '--line-of', pair.a, '--baud', '19200', '--parity', 'even']);
    cleanups.push(() => sim.stop());
    const { stdout, stderr } = await run(
      process.execPath,
      ['--import', 'tsx', 'src/cli.ts', 'scan', '--port', pair.a, '--ids', '1-4', '--timeout', '300', '--baud', '9600,19200', '--parity', 'odd,even'],
      { cwd: root },
    );
    expect(stderr).toContain('9600 odd: 0 device(s)');
    expect(stderr).toContain('9600 even: 0 device(s)');
    expect(stderr).toContain('19200 odd: 0 device(s)');
    expect(stderr).toContain('19200 even: 2 device(s)');
    expect(stderr).toContain('found unit 1 at 19200 even: sdm630 (model code 112)');
    expect(stderr).toContain('paste the snippet above into /etc/metergate/config.yaml');
    const snippet = parse(stdout) as { buses: Array<Record<string, unknown>>; meters: Array<{ unit_id: number; profile: string; bus: string }> };
    expect(snippet.buses).toEqual([{ name: 'rs485-1', type: 'rtu', port: pair.a, baud_rate: 19200, parity: 'even', stop_bits: 1 }]);
    expect(snippet.meters.map((m) => [m.unit_id, m.profile, m.bus])).toEqual([[1, 'sdm630', 'rs485-1'], [3, 'sdm120', 'rs485-1']]);
    const config = validateConfig({ organization_id: ORG, ...snippet }, 'snippet', {});
    expect(config.buses[0].baud_rate).toBe(19200);
  });

  it('says why and what to do when the port cannot be used, instead of "no meters found"', async () => {
    const missing = '/dev/ttyUSB-metergate-test-missing';
    const r = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'scan', '--port', missing, '--ids', '1-2'], { cwd: root }).then(
      () => null,
      (e: { code: number; stderr: string; stdout: string }) => e,
    );
    expect(r).not.toBeNull();
    expect(r!.code).toBe(1);
    expect(r!.stdout).toBe('');
    expect(r!.stderr).toContain(`cannot use ${missing}`);
    expect(r!.stderr).toMatch(/fix: plug in the RS-485 adapter and give its device with --port/);
  });

  it('lists what to check when nothing answers, and exits 2', async () => {
    const pair = await pty();
    const r = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'scan', '--port', pair.a, '--ids', '1-2', '--timeout', '100'], { cwd: root }).then(
      () => null,
      (e: { code: number; stderr: string; stdout: string }) => e,
    );
    expect(r!.code).toBe(2);
    expect(r!.stdout).toBe('# no meters found\n');
    expect(r!.stderr).toContain('A to A (D+), B to B (D-)');
    expect(r!.stderr).toContain('--baud 2400,4800,9600,19200,38400 --parity even,none,odd');
  });

  it('scans behind a Modbus TCP gateway', async () => {
    const sim = await startSim(['--tcp', '0', '--unit', '2:em340,3']);
    cleanups.push(() => sim.stop());
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'scan', '--tcp', `127.0.0.1:${sim.ready.tcpPort}`, '--ids', '1-4', '--timeout', '300'], { cwd: root });
    const snippet = parse(stdout) as { buses: Array<Record<string, unknown>>; meters: Array<{ unit_id: number; profile: string }> };
    expect(snippet.buses).toEqual([{ name: 'gateway-1', type: 'tcp', host: '127.0.0.1', tcp_port: sim.ready.tcpPort }]);
    expect(snippet.meters.map((m) => [m.unit_id, m.profile])).toEqual([[2, 'em340'], [3, 'sdm630']]);
    validateConfig({ organization_id: ORG, ...snippet }, 'snippet', {});
    // Behind a TCP gateway the scan chose no line setting, so it names none (issue 31 point 4).
    expect(stderr).toContain('found unit 2: em340');
    expect(stderr).toContain(`2 meter(s) behind 127.0.0.1:${sim.ready.tcpPort}`);
    expect(stderr).not.toMatch(/9600|even|baud|parity/);
  });

  it('behind a Modbus TCP gateway where nothing answers: TCP advice, not RS-485 wiring', async () => {
    const sim = await startSim(['--tcp', '0', '--unit', '5']);
    cleanups.push(() => sim.stop());
    const where = `127.0.0.1:${sim.ready.tcpPort}`;
    const r = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'scan', '--tcp', where, '--ids', '1-2', '--timeout', '100', '--baud', '19200'], { cwd: root }).then(
      () => null,
      (e: { code: number; stderr: string; stdout: string }) => e,
    );
    expect(r!.code).toBe(2);
    expect(r!.stderr).toContain(`No meter answered behind ${where}`);
    expect(r!.stderr).toContain(`\`metergate scan --rtu-over-tcp ${where}\``);
    expect(r!.stderr).toContain('--baud and --parity set a serial line');
    expect(r!.stderr).not.toMatch(/A to A|--baud 2400|found unit|19200 even/);
  });

  it('parses unit id ranges', () => {
    expect(parseUnitIds('1-3,7,5-6')).toEqual([1, 2, 3, 5, 6, 7]);
    expect(parseUnitIds('1-247')).toHaveLength(247);
    expect(() => parseUnitIds('0-3')).toThrow();
    expect(() => parseUnitIds('200-300')).toThrow();
  });
});
