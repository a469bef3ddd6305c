// `metergate scan` on a port where a German meter pushes SML (binary) at 9600 8N1: a real
// recorded EMH file (test/data/sml, sources in its README) replayed by `metergate sim` on a
// socat pty, heard only when the gateway's end is set to 9600 baud (--line-of); noise at 115200.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { validateConfig } from '../../src/config/load.js';
import { cleanupsAfterEach } from '../helpers/cleanups.js';
import { hasSocat } from '../helpers/peers.js';
import { startSim } from '../helpers/sim-process.js';
import { startPtyPair } from '../helpers/socat.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const ORG = '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11';

describe.skipIf(!hasSocat)('metergate scan recognises an SML meter', () => {
  const cleanup = cleanupsAfterEach();

  it('an EMH meter pushing SML at 9600 8N1 (a real recorded file): found without --p1, with the line to configure', { timeout: 120_000 }, async () => {
    const pair = cleanup.trackPair(await startPtyPair());
    const recording = fileURLToPath(new URL('../data/sml/emh.hex', import.meta.url));
    cleanup.track(await startSim(['--p1', recording, '--p1-line', '9600 8N1', '--p1-period-ms', '300', '--serial', pair.b, '--line-of', pair.a]));
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'scan', '--port', pair.a, '--bus-name', 'sml'], { cwd: root });
    expect(stderr).toMatch(/115200 8N1: no whole telegram/);
    // 9600 7E1 heard SML's escape sequence and gave way to 9600 8N1 at once.
    expect(stderr).toMatch(/9600 7E1: no whole telegram/);
    expect(stderr).toContain('found: SML meter 1EMH0004321349 (EMH metering SML meter) at 9600 8N1, CRC checked');
    const doc = parse(stdout) as { buses: unknown[]; meters: Array<{ resource_id: string }> };
    expect(doc.buses).toEqual([{ name: 'sml', type: 'p1', port: pair.a, line: '9600 8N1' }]);
    expect(validateConfig({ organization_id: ORG, ...doc }, 'snippet', {}).meters[0]).toMatchObject({ bus: 'sml', profile: 'dsmr' });
  });
});
