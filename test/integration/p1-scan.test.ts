// `metergate scan` on a P1 port: a simulated smart meter replaying real telegrams
// (../shared/data/dsmr, read in place) on a socat pty, answering only at its own line
// settings (--line-of: garbage to a master set to another baud rate, as a real UART hears it).
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { validateConfig } from '../../src/config/load.js';
import { cleanupsAfterEach } from '../helpers/cleanups.js';
import { hasSocat } from '../helpers/peers.js';
import { hasSharedData, sharedData } from '../helpers/shared-data.js';
import { startSim } from '../helpers/sim-process.js';
import { startPtyPair } from '../helpers/socat.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const ORG = '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11';

describe.skipIf(!hasSocat || !hasSharedData)('metergate scan recognises a P1 port', () => {
  const cleanup = cleanupsAfterEach();

  async function p1Meter(file: string, line: string, periodMs: number) {
    const pair = cleanup.trackPair(await startPtyPair());
    cleanup.track(await startSim(['--p1', sharedData(`dsmr/${file}`), '--p1-line', line, '--p1-period-ms', String(periodMs), '--serial', pair.b, '--line-of', pair.a]));
    return pair;
  }

  it('a DSMR 3.0 meter at 9600 7E1: found without --p1 (the port talks by itself), after 115200 gave only garbage', { timeout: 120_000 }, async () => {
    // Sending every 300 ms: well inside scan's 1.5 s of listening, even on a loaded machine.
    const pair = await p1Meter('v3.txt', '9600 7E1', 300);
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'scan', '--port', pair.a, '--bus-name', 'smart-meter'], { cwd: root });
    expect(stderr).toContain('talks by itself');
    expect(stderr).toMatch(/115200 8N1: no whole telegram/);
    expect(stderr).toContain('found: DSMR 2.2/3.0 smart meter K8EG004046395507 (Iskraemeco MT382-1000) at 9600 7E1, no CRC');
    const doc = parse(stdout) as { buses: unknown[]; meters: Array<{ resource_id: string }> };
    expect(doc.buses).toEqual([{ name: 'smart-meter', type: 'p1', port: pair.a, line: '9600 7E1' }]);
    // The snippet is a valid config as it stands.
    const config = validateConfig({ organization_id: ORG, ...doc }, 'snippet', {});
    expect(config.meters[0]).toMatchObject({ bus: 'smart-meter', unit_id: 1, profile: 'dsmr' });
  });

  it('a DSMR 5 meter with --p1: version and meter id from the telegram, CRC checked; its M-Bus channel with a reading under channels:', { timeout: 120_000 }, async () => {
    const pair = await p1Meter('v5_two_mbus.txt', '115200 8N1', 1000);
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'scan', '--p1', '--port', pair.a], { cwd: root });
    expect(stderr).toContain('found: DSMR 5.0 smart meter E0044007382246019 (Iskraemeco M550T-1012) at 115200 8N1, CRC checked');
    const doc = parse(stdout) as { buses: unknown[]; meters: Array<{ resource_id: string; bus: string; channels: Record<string, string> }> };
    expect(doc.buses).toEqual([{ name: 'p1-1', type: 'p1', port: pair.a }]);
    // Two channels in the telegram: 2 the gas meter with a reading; 1 without a unit (commented, with why).
    expect(stdout).toMatch(/^ {6}2: [0-9a-f-]{36} {2}# replace with this channel's resource id; gas \(device type 3\), id G0039001936990619, reads gas_volume 246\.138 m3$/m);
    expect(stdout).toMatch(/^ {6}# 1: [0-9a-f-]{36} {2}# gas \(device type 3\): unit null .*; uncomment once it sends one$/m);
    expect(Object.keys(doc.meters[0]!.channels)).toEqual(['2']);
    const config = validateConfig({ organization_id: ORG, ...doc }, 'snippet', {});
    expect(config.meters.map((m) => [m.profile, m.unit_id, m.bus])).toEqual([['dsmr', 1, 'p1-1'], ['dsmr-mbus', 2, 'p1-1']]);
  });

  it('a silent line with --p1: says what to check and exits 2', { timeout: 120_000 }, async () => {
    const pair = cleanup.trackPair(await startPtyPair());
    const r = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'scan', '--p1', '--port', pair.a], { cwd: root }).then(
      () => null,
      (e: { code: number; stderr: string; stdout: string }) => e,
    );
    expect(r!.code).toBe(2);
    expect(r!.stderr).toContain('No whole P1 telegram');
    expect(r!.stderr).toContain('inverted TTL');
  });
});
