// `metergate scan` on a port where a German meter pushes IEC 62056-21 mode D ("D0") at 9600 7E1:
// a real recorded EasyMeter Q3D telegram (test/data/iec62056-21, sources in its README) replayed
// by the simulator on a socat pty, answering only at its own line settings (--line-of).
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

describe.skipIf(!hasSocat)('metergate scan recognises an IEC 62056-21 mode D meter', () => {
  const cleanup = cleanupsAfterEach();

  it('an EasyMeter Q3D pushing IEC 62056-21 mode D at 9600 7E1 (a real recorded telegram, ETX + BCC after it from the reading head): found without --p1', { timeout: 120_000 }, async () => {
    const pair = cleanup.trackPair(await startPtyPair());
    // The recorded telegram with what a reading head adds after it (test/data/iec62056-21/README.md).
    const dir = mkdtempSync(join(tmpdir(), 'mg-d0-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'q3d.txt');
    writeFileSync(file, `${readFileSync(new URL('../data/iec62056-21/easymeter_q3d_v3.03.txt', import.meta.url), 'latin1')}\x03\x19`, 'latin1');
    cleanup.track(await startSim(['--p1', file, '--p1-line', '9600 7E1', '--p1-period-ms', '300', '--serial', pair.b, '--line-of', pair.a]));
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'scan', '--port', pair.a, '--bus-name', 'd0'], { cwd: root });
    expect(stderr).toContain('found: IEC 62056-21 mode D meter 1ESY1233002534 (EasyMeter Q3DA1024 V3.03) at 9600 7E1, no CRC (mode D has none)');
    const doc = parse(stdout) as { buses: unknown[]; meters: Array<{ resource_id: string }> };
    expect(doc.buses).toEqual([{ name: 'd0', type: 'p1', port: pair.a, line: '9600 7E1' }]);
    expect(validateConfig({ organization_id: ORG, ...doc }, 'snippet', {}).meters[0]).toMatchObject({ bus: 'd0', profile: 'dsmr' });
  });

});
