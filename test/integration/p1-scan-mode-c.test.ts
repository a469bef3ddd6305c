// `metergate scan --p1` on a port where an IEC 62056-21 mode C meter waits to be asked: silent at
// every line setting, so scan asks it (sign-on at 300 baud, test/helpers/mode-c-meter.ts on a
// socat pty, answering with the real recorded Itron EM214 readout in test/data/iec62056-21) and
// prints a snippet with `mode: C` that the config accepts.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { validateConfig } from '../../src/config/load.js';
import { cleanupsAfterEach } from '../helpers/cleanups.js';
import { runCli } from '../helpers/cli-process.js';
import { startModeCMeter } from '../helpers/mode-c-meter.js';
import { hasSocat } from '../helpers/peers.js';
import { ORG } from '../helpers/poller-harness.js';
import { startPtyPair } from '../helpers/socat.js';

const RECORDING = fileURLToPath(new URL('../data/iec62056-21/itron_em214_mode_c.txt', import.meta.url));

describe.skipIf(!hasSocat)('metergate scan finds an IEC 62056-21 mode C meter', () => {
  const cleanup = cleanupsAfterEach();

  it('a port silent at every line setting is asked: the EM214 answers, the snippet says mode: C', { timeout: 120_000 }, async () => {
    const pair = cleanup.trackPair(await startPtyPair());
    const meter = await startModeCMeter({ recording: RECORDING, gatewaySide: pair.a, meterSide: pair.b });
    cleanup.push(() => meter.stop());
    const { code, stdout, stderr } = await runCli(['scan', '--p1', '--port', pair.a, '--bus-name', 'optical'], {}, 'source');
    expect(code, stderr).toBe(0);
    expect(stderr).toContain('mode C (asked): whole readout');
    expect(stderr).toContain('found: IEC 62056-21 mode C meter 1240007670003202 (Itron EM214), asked with the sign-on request, BCC checked');
    expect(meter.signOnSpeeds).toEqual([300]);
    const doc = parse(stdout) as { buses: unknown[]; meters: Array<{ resource_id: string }> };
    expect(doc.buses).toEqual([{ name: 'optical', type: 'p1', port: pair.a, mode: 'C' }]);
    expect(validateConfig({ organization_id: ORG, ...doc }, 'snippet', {}).meters[0]).toMatchObject({ bus: 'optical', profile: 'dsmr' });
  });
});
