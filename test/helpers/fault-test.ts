// One fault of the campaign (scripts/faults) as a test: the same fault at CI length against
// the same real peers; nothing taken may be lost.
import { afterEach, expect, it } from 'vitest';
import { FAULTS } from '../../scripts/faults/faults.js';
import { FaultRig, formatRows } from './fault-rig.js';

export function faultTest(name: string, timeoutMs = 300_000): void {
  let rig: FaultRig | undefined;
  afterEach(async () => {
    await rig?.stop();
    rig = undefined;
  });
  it(`${name}: nothing taken is lost`, { timeout: timeoutMs }, async () => {
    const fault = FAULTS.find((f) => f.name === name);
    if (!fault) throw new Error(`no fault named ${name} in scripts/faults/faults.ts`);
    rig = new FaultRig(fault.rig);
    await rig.start();
    const row = await fault.run(rig, 'ci');
    const table = formatRows([row]);
    console.log(table);
    expect(row.taken, table).toBeGreaterThan(0);
    expect(row.lost, `${table}\n${rig.log().slice(-3000)}`).toBe(0);
    expect(row.recoverS, table).not.toBeNull();
    // Every fault CI runs ends fixed: nothing may stay held either.
    expect(row.held, table).toBe(0);
  });
}
