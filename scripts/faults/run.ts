// The fault campaign: drives each fault against the real peers (mosquitto with TLS and ACL,
// the simulator on socat ptys, a real SQLite file) and prints one row per fault: readings
// taken, delivered, held (kept in outbox_held, visible), lost, duplicates, poll slots without a reading, seconds to recover.
// Lost must be 0 in every row.
//   npx tsx scripts/faults/run.ts [--ci] [fault name substring ...]
// --ci runs the shortened durations the CI test uses (test/integration/faults.test.ts).
// Needs root for the disk-full row (a tmpfs) and libfaketime for the clock row.
import { FaultRig, formatRows, type FaultRow } from '../../test/helpers/fault-rig.js';
import { FAULTS, type Scale } from './faults.js';

const args = process.argv.slice(2);
const scale: Scale = args.includes('--ci') ? 'ci' : 'full';
const filters = args.filter((a) => !a.startsWith('--'));
const chosen = FAULTS.filter((f) => filters.length === 0 || filters.some((x) => f.name.includes(x)));

const rows: FaultRow[] = [];
let failed = false;
for (const fault of chosen) {
  const rig = new FaultRig(fault.rig);
  try {
    await rig.start();
    // A few clean slots first, so the window starts with a working gateway.
    await new Promise((r) => setTimeout(r, 3000));
    const row = await fault.run(rig, scale);
    rows.push(row);
    console.log(formatRows([row]).split('\n').at(-1));
  } catch (err) {
    failed = true;
    rows.push({ fault: fault.name, taken: 0, delivered: 0, held: 0, lost: 0, missedSlots: 0, duplicates: 0, recoverS: null, note: `campaign error: ${(err as Error).message.split('\n')[0]}` });
    console.error(err);
  } finally {
    await rig.stop().catch((e: unknown) => console.error(e));
  }
}
console.log(`\nfault campaign (${scale === 'ci' ? 'CI durations' : 'full durations'}), ${new Date().toISOString()}\n`);
console.log(formatRows(rows));
if (failed || rows.some((r) => r.lost > 0 || r.recoverS === null)) process.exitCode = 1;
