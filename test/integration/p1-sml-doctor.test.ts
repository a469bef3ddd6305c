// doctor on SML meters (binary push at 9600 8N1), from real recordings (test/data/sml) written
// to socat ptys: an EMH meter passes with its id and values, an Iskra MT631 without its PIN is
// a warning naming the PIN, a line where every file has a bit error fails with the reading-head
// fix, a silent one with the optical-interface fix, an SML meter on a 9600 7E1 bus with the line to set.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_CHECKS, formatResult, runDoctor } from '../../src/ops/doctor/run.js';
import { METER_A, METER_B, METER_C, ORG } from '../helpers/poller-harness.js';
import { hasSocat } from '../helpers/peers.js';
import { startSmlMeter, type SmlMeter } from '../helpers/sml-meter.js';
import { removeDir, startPtyPair, type PtyPair } from '../helpers/socat.js';

const checks = ALL_CHECKS.filter((c) => c.name === 'config' || c.name === 'serial' || c.name === 'meters');
const METER_D = '4d5e6f70-8192-4a3b-8c4d-5e6f708192a3';
const METER_E = '5e6f7081-92a3-4b4c-9d5e-6f708192a3b4';

describe.skipIf(!hasSocat)('doctor on SML meters', () => {
  let dir: string;
  const pairs: PtyPair[] = [];
  const meters: SmlMeter[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mg-sml-doctor-'));
    for (let i = 0; i < 5; i++) pairs.push(await startPtyPair());
    meters.push(await startSmlMeter(pairs[0]!.b, 'emh.hex', 500), await startSmlMeter(pairs[1]!.b, 'iskra_mt631_without_pin.hex', 500));
    // Every file with one bit flipped (daylight on the reading head).
    const damaged = await startSmlMeter(pairs[2]!.b, 'emh.hex', 500);
    damaged.damage((file, n) => {
      const out = Buffer.from(file);
      out[16 + ((n * 41) % (out.length - 32))]! ^= 0x04;
      return out;
    });
    meters.push(damaged);
    // pairs[3]: nothing on the other end (the head is not on the interface).
    // pairs[4]: an SML meter on a bus set to 9600 7E1.
    meters.push(await startSmlMeter(pairs[4]!.b, 'iskra_mt631.hex', 500));
  }, 60_000);
  afterAll(async () => {
    for (const m of meters) await m.stop();
    for (const p of pairs) {
      await p.stop();
      removeDir(p.dir);
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('passes a meter with power, warns about one without its PIN, fails bit errors, silence and a text line setting, each with its fix', { timeout: 120_000 }, async () => {
    const configPath = join(dir, 'config.yaml');
    const ids = [METER_A, METER_B, METER_C, METER_D, METER_E];
    writeFileSync(
      configPath,
      stringify({
        organization_id: ORG,
        data_dir: join(dir, 'data'),
        buses: pairs.map((p, i) => ({ name: `sml-${i}`, type: 'p1', port: p.a, line: i === 4 ? '9600 7E1' : '9600 8N1' })),
        meters: ids.map((id, i) => ({ resource_id: id, bus: `sml-${i}` })),
        prices: { source: 'none' },
      }),
    );
    const results = await runDoctor({ configPath, checks, timeoutMs: 3000, serviceUser: 'root' });
    const text = results.map(formatResult).join('\n');
    const of = (id: string) => results.find((r) => r.check === `meter ${id.slice(0, 8)}`)!;
    expect(of(METER_A), text).toMatchObject({ status: 'pass' });
    expect(of(METER_A).detail).toMatch(/^sml-0 P1 meter \(.*\): SML meter 1EMH0004321349 \(EMH metering SML meter\) at 9600 8N1, CRC checked: 564 W, 15338\.6 kWh imported$/);
    expect(of(METER_B), text).toMatchObject({ status: 'warn', fix: expect.stringContaining('PIN') });
    expect(of(METER_B).detail).toMatch(/SML meter 1ISK0075126084 \(Iskraemeco SML meter\) at 9600 8N1, CRC checked: 2043\.0 kWh imported; but no power in the meter's data/);
    expect(of(METER_C), text).toMatchObject({ status: 'fail', fix: expect.stringMatching(/failed their CRC\): seat the optical reading head/) });
    expect(of(METER_D), text).toMatchObject({ status: 'fail', fix: expect.stringContaining("optical interface") });
    expect(of(METER_E), text).toMatchObject({ status: 'fail', fix: 'SML (binary) on a text line (9600 7E1): an SML meter, set line: 9600 8N1 on buses[4]' });
  });
});
