// doctor checks a DSMR P1 meter like a Modbus one: simulated smart meters replaying real
// telegrams (../shared/data/dsmr, read in place) on socat ptys, one at the wrong line setting,
// one port silent.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_CHECKS, formatResult, runDoctor } from '../../src/ops/doctor/run.js';
import { METER_A, METER_B, METER_C, ORG } from '../helpers/poller-harness.js';
import { hasSocat } from '../helpers/peers.js';
import { hasSharedData, sharedData } from '../helpers/shared-data.js';
import { startSim, type SimProcess } from '../helpers/sim-process.js';
import { removeDir, startPtyPair, type PtyPair } from '../helpers/socat.js';

const checks = ALL_CHECKS.filter((c) => c.name === 'config' || c.name === 'serial' || c.name === 'meters');

describe.skipIf(!hasSocat || !hasSharedData)('doctor on P1 meters', () => {
  let dir: string;
  const pairs: PtyPair[] = [];
  const sims: SimProcess[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mg-p1-doctor-'));
    for (let i = 0; i < 3; i++) pairs.push(await startPtyPair());
    // A DSMR 4.2 meter (every 10 s on a real one; 1 s here to keep the test short).
    sims.push(await startSim(['--p1', sharedData('dsmr/v4_2.txt'), '--serial', pairs[0].b, '--p1-period-ms', '1000']));
    // A DSMR 2.2 meter at 9600 7E1, configured as if it were DSMR 4+.
    sims.push(await startSim(['--p1', sharedData('dsmr/v2_2.txt'), '--p1-line', '9600 7E1', '--serial', pairs[1].b, '--line-of', pairs[1].a, '--p1-period-ms', '1000']));
    // pairs[2]: nothing on the other end.
  }, 60_000);
  afterAll(async () => {
    for (const s of sims) await s.stop();
    for (const p of pairs) {
      await p.stop();
      removeDir(p.dir);
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('passes a sending meter with its DSMR version, id and values; fails a wrong line setting and a silent port, each with its fix', { timeout: 120_000 }, async () => {
    const configPath = join(dir, 'config.yaml');
    writeFileSync(
      configPath,
      stringify({
        organization_id: ORG,
        data_dir: join(dir, 'data'),
        buses: [
          { name: 'p1-a', type: 'p1', port: pairs[0].a },
          { name: 'p1-b', type: 'p1', port: pairs[1].a },
          { name: 'p1-c', type: 'p1', port: pairs[2].a },
        ],
        meters: [
          { resource_id: METER_A, bus: 'p1-a' },
          { resource_id: METER_B, bus: 'p1-b' },
          { resource_id: METER_C, bus: 'p1-c' },
        ],
        prices: { source: 'none' },
      }),
    );
    const results = await runDoctor({ configPath, checks, timeoutMs: 3000, serviceUser: 'root' });
    const text = results.map(formatResult).join('\n');
    const of = (id: string) => results.find((r) => r.check === `meter ${id.slice(0, 8)}`)!;
    expect(results.filter((r) => r.check.startsWith('serial ')).map((r) => r.status), text).toEqual(['pass', 'pass', 'pass']);
    expect(of(METER_A), text).toMatchObject({ status: 'pass' });
    expect(of(METER_A).detail).toMatch(/^p1-a P1 meter \(.*\): DSMR 4\.2 smart meter 3960221976967177082151037881335713 \(Kaifa KAIFA-METER\) at 115200 8N1, CRC checked: 2027 W, 301\d\.\d kWh imported$/);
    expect(of(METER_B), text).toMatchObject({ status: 'fail', fix: expect.stringContaining('wrong line settings, set line: 9600 7E1 on buses[1]') });
    expect(of(METER_C), text).toMatchObject({ status: 'fail', fix: expect.stringContaining('inverted TTL') });
    expect(of(METER_C).detail).toContain('(0 bytes)');
  });
});
