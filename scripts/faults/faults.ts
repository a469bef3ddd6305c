// The faults of the campaign, each driven against the real peers of a FaultRig. `scale`
// shortens the long ones for CI (the same fault, minutes instead of tens of minutes); the
// campaign (scripts/faults/run.ts) runs them at full length.
import { spawn } from 'node:child_process';
import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { NOISY_METER, PLUGGABLE_METER, type FaultRig, type FaultRow, type RigOptions } from '../../test/helpers/fault-rig.js';

export type Scale = 'full' | 'ci';

export interface Fault {
  readonly name: string;
  /** What the rig needs for this fault (a tmpfs, libfaketime, ...). */
  readonly rig: RigOptions;
  run(rig: FaultRig, scale: Scale): Promise<FaultRow>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const seconds = (scale: Scale, full: number, ci: number) => (scale === 'full' ? full : ci) * 1000;

/** Writes zeros into `dir` until the file system refuses: full to the last byte it will give. */
function fillDisk(dir: string): string {
  const path = join(dir, 'filler');
  const fd = openSync(path, 'w');
  const block = Buffer.alloc(64 * 1024);
  try {
    for (let size = block.length; size >= 1; ) {
      try {
        writeSync(fd, block, 0, size);
      } catch {
        size = Math.floor(size / 2);
      }
    }
  } finally {
    closeSync(fd);
  }
  return path;
}

export const FAULTS: readonly Fault[] = [
  {
    name: 'ACL refusal',
    rig: {},
    async run(rig, scale) {
      const refusedMs = seconds(scale, 120, 20);
      return rig.measure(`ACL refuses one meter's topics ${refusedMs / 1000} s, then fixed`, async () => {
        await rig.refuseTopicsOf(NOISY_METER);
        const fromMs = Date.now();
        await sleep(refusedMs);
        const held = rig.heldCount();
        const otherTaken = rig.takenBetween(PLUGGABLE_METER, fromMs, Date.now());
        const otherDelivered = rig.deliveredBetween(PLUGGABLE_METER, fromMs, Date.now());
        await rig.refuseTopicsOf(null);
        // The fix doctor prints: correct the ACL, reload the broker, then retry the held messages.
        rig.outboxRetry();
        return `${held} held (0x87) at the fix; meanwhile the other meter delivered ${otherDelivered} of ${otherTaken}`;
      });
    },
  },
  {
    name: 'quota exceeded',
    // A scripted MQTT 5 peer: the 20th to the 69th publish answered 0x97.
    rig: { scriptedAnswer: (n) => (n >= 20 && n < 70 ? 0x97 : 0) },
    async run(rig, scale) {
      return rig.measure('a burst of 50 PUBACK 0x97 (quota exceeded)', async () => {
        await rig.until(() => (rig.scripted?.answered.filter((c) => c === 0x97).length ?? 0) >= 50, '50 refusals', seconds(scale, 600, 300));
        return `${rig.scripted?.answered.length ?? 0} publishes answered, 50 of them 0x97`;
      });
    },
  },
  {
    name: 'broker down',
    rig: {},
    async run(rig, scale) {
      const downMs = seconds(scale, 600, 20);
      return rig.measure(`broker down ${downMs / 1000} s`, async () => {
        await rig.broker.pause();
        await sleep(downMs);
        await rig.broker.resume();
      });
    },
  },
  {
    name: 'kill -9 during drain',
    // A slow drain, so the kills land while the backlog is still going out.
    rig: { mqttExtra: '  backlog_rate_per_s: 20\n  inflight_window: 10' },
    async run(rig, scale) {
      const kills = scale === 'full' ? 20 : 5;
      return rig.measure(`${kills} x kill -9 during a backlog drain`, async () => {
        await rig.broker.pause();
        await sleep(seconds(scale, 60, 20));
        await rig.broker.resume();
        for (let i = 0; i < kills; i++) {
          await sleep(500 + Math.random() * 1500);
          await rig.kill9();
          await rig.startDaemon();
        }
        return `backlog built for ${seconds(scale, 60, 20) / 1000} s, drained at 20/s`;
      });
    },
  },
  {
    name: 'disk full',
    rig: { tmpfsBytes: 64 * 1024 * 1024 },
    async run(rig, scale) {
      const fullMs = seconds(scale, 120, 30);
      return rig.measure(`disk full ${fullMs / 1000} s, then freed`, async () => {
        const filler = fillDisk(rig.dataDir);
        await sleep(fullMs);
        rmSync(filler);
      });
    },
  },
  {
    name: 'database locked',
    rig: {},
    async run(rig, scale) {
      const lockedMs = seconds(scale, 30, 30);
      return rig.measure(`database locked by another process ${lockedMs / 1000} s`, async () => {
        // Another process holds SQLite's write lock (BEGIN EXCLUSIVE) for the whole time.
        const holder = spawn('python3', ['-c', `import sqlite3,time,sys\nc=sqlite3.connect(sys.argv[1],isolation_level=None)\nc.execute('BEGIN EXCLUSIVE')\nprint('locked',flush=True)\ntime.sleep(${lockedMs / 1000})\nc.execute('COMMIT')`, rig.dbPath], { stdio: ['ignore', 'pipe', 'inherit'] });
        await new Promise<void>((resolve, reject) => {
          holder.stdout!.once('data', () => resolve());
          holder.once('exit', (code) => reject(new Error(`lock holder exited ${code}`)));
        });
        await new Promise((r) => holder.once('exit', r));
      });
    },
  },
  {
    name: 'serial unplug',
    rig: {},
    async run(rig, scale) {
      const outMs = seconds(scale, 60, 15);
      let replugAtMs = 0;
      const row = await rig.measure(`serial unplug ${outMs / 1000} s and replug`, async () => {
        await rig.unplug();
        await sleep(outMs);
        await rig.replug();
        replugAtMs = Date.now();
        // The meter is back when a reading taken after the replug is stored.
        await rig.until(() => rig.takenBetween(PLUGGABLE_METER, replugAtMs, Date.now() + 1) > 0, 'a reading after the replug', 120_000);
        return `meter polled again ${((Date.now() - replugAtMs) / 1000).toFixed(1)} s after the replug`;
      });
      return row;
    },
  },
  {
    name: 'noisy line',
    rig: {},
    async run(rig, scale) {
      const noisyMs = seconds(scale, 300, 30);
      const rate = 0.01;
      return rig.measure(`${rate * 100} % of RTU bytes corrupted ${noisyMs / 1000} s`, async () => {
        const fromMs = Date.now();
        rig.setByteErrorRate(rate);
        await sleep(noisyMs);
        rig.setByteErrorRate(0);
        const slots = Math.floor(noisyMs / rig.pollIntervalMs);
        const got = rig.takenBetween(NOISY_METER, fromMs, fromMs + noisyMs);
        return `${got} of ${slots} slots of the noisy meter published (${((100 * got) / slots).toFixed(0)} %)`;
      });
    },
  },
  {
    name: 'clock steps',
    rig: { faketime: true },
    async run(rig, scale) {
      const holdMs = seconds(scale, 120, 10);
      return rig.measure(
        'clock stepped -1 h, back, +1 h, back while trusted',
        async () => {
          for (const offsetS of [-3600, 0, 3600, 0]) {
            rig.setClockOffset(offsetS);
            await sleep(holdMs);
          }
        },
        // What was stamped an hour ahead is quarantined until an operator releases it.
        { heldStays: true },
      );
    },
  },
];
