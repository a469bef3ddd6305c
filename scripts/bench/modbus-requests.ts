// Benchmark: requests and bus time per poll of an SDM630, planner vs naive readers.
//   npx tsx scripts/bench/modbus-requests.ts [polls=40]
// Runs the real simulator as an RTU slave behind a socat pty pair. A pty moves bytes
// instantly, so the simulator is started with --emulate-wire-time: each answer is held back
// by the time request and answer would take on a 9600 baud 8E1 line (11 bits a character).
// The wire-time limit is computed from the bytes of the plan: every frame on the line plus
// the 3.5-character silence Modbus RTU requires before each frame. Overhead beyond it is
// our gap timer, the pty, the event loop and the simulator process.
import os from 'node:os';
import type { RegisterSpec } from '../../src/config/types.js';
import { createLogger } from '../../src/log.js';
import { ModbusBus } from '../../src/modbus/bus.js';
import { registerCount } from '../../src/modbus/decode.js';
import { planOnePerValue, planReads, selectRegisters, type PlannedRead } from '../../src/modbus/planner.js';
import { builtInProfiles } from '../../src/modbus/profiles/index.js';
import { startSim } from '../../test/helpers/sim-process.js';
import { removeDir, startPtyPair } from '../../test/helpers/socat.js';

const sdm630 = builtInProfiles['sdm630']!;
const POLLS = Number(process.argv[2] ?? 40);
const BAUD = 9600;
const BITS_PER_CHAR = 11; // 8E1: start + 8 data + parity + stop
const CHAR_MS = (BITS_PER_CHAR * 1000) / BAUD;

/** One 16-bit register per request, as the most naive readers do. */
function planOnePerRegister(regs: readonly RegisterSpec[]): PlannedRead[] {
  return regs.flatMap((spec) =>
    Array.from({ length: registerCount(spec.type) }, (_, i) => ({ functionCode: 4 as const, address: spec.address + i, count: 1, values: [] })),
  );
}

/** Characters on the line for one read: request 8, answer 5 + 2 per register; plus 3.5-char silence before each. */
function wireChars(plan: readonly PlannedRead[]): { frames: number; withGaps: number } {
  const frames = plan.reduce((sum, r) => sum + 8 + 5 + 2 * r.count, 0);
  return { frames, withGaps: frames + plan.length * 2 * 3.5 };
}

async function measure(bus: ModbusBus, plan: readonly PlannedRead[]): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < POLLS; i++) {
    const t0 = performance.now();
    for (const r of plan) await bus.read({ unitId: 1, functionCode: r.functionCode, address: r.address, count: r.count });
    times.push(performance.now() - t0);
  }
  return times;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const pair = await startPtyPair();
  const sim = await startSim(['--serial', pair.b, '--unit', '1', '--baud', String(BAUD), '--emulate-wire-time']);
  const rawPair = await startPtyPair();
  const rawSim = await startSim(['--serial', rawPair.b, '--unit', '1']);
  const mkBus = (port: string) =>
    new ModbusBus({
      bus: { name: 'bench', type: 'rtu', port, baud_rate: BAUD, parity: 'even', data_bits: 8, stop_bits: 1, tcp_port: 502, timeout_ms: 1000, retries: 0 },
      logger: createLogger('silent'),
    });
  const bus = mkBus(pair.a);
  const raw = mkBus(rawPair.a);
  await bus.open();
  await raw.open();
  try {
    const sets: Array<[string, RegisterSpec[]]> = [
      ['default set (total_active_power, active_energy_import)', selectRegisters(sdm630)],
      ['all 11 SDM630 metrics (default + every extra)', selectRegisters(sdm630, sdm630.registers.map((r) => r.metric))],
    ];
    for (const [label, regs] of sets) {
      const plans: Array<[string, PlannedRead[]]> = [
        ['planner', planReads(regs, sdm630)],
        ['one value per request', planOnePerValue(regs, sdm630)],
        ['one register per request', planOnePerRegister(regs)],
      ];
      console.log(`\nSDM630, ${label}: ${regs.length} values, 9600 baud 8E1, ${POLLS} polls each`);
      console.log('reader                      requests  wire-limit ms  median ms  median/limit  min ms  min/limit  raw pty ms/request');
      let plannerMs = 0;
      for (const [name, plan] of plans) {
        const limitMs = wireChars(plan).withGaps * CHAR_MS;
        await measure(bus, plan.slice(0, 1)); // warm-up
        const times = await measure(bus, plan);
        const ms = median(times);
        const minMs = Math.min(...times);
        const rawMs = median(await measure(raw, plan)) / plan.length;
        if (name === 'planner') plannerMs = ms;
        console.log(
          `${name.padEnd(27)} ${String(plan.length).padStart(8)}  ${limitMs.toFixed(1).padStart(13)}  ${ms.toFixed(1).padStart(9)}  ${(ms / limitMs).toFixed(3).padStart(12)}  ${minMs.toFixed(1).padStart(6)}  ${(minMs / limitMs).toFixed(3).padStart(9)}  ${rawMs.toFixed(2).padStart(18)}` +
            (name === 'planner' ? '' : `   (${(ms / plannerMs).toFixed(1)}x the planner's bus time)`),
        );
      }
      const p = planReads(regs, sdm630);
      console.log(`planner blocks: ${p.map((r) => `0x${r.address.toString(16).padStart(4, '0')}+${r.count}`).join(', ')}`);
    }
    console.log(
      `\nNotes: wire-limit = frame bytes x ${BITS_PER_CHAR} bits / ${BAUD} baud + 2 x 3.5-character silences per request (${CHAR_MS.toFixed(3)} ms/char).` +
        '\nThe simulator adds the frames\' wire time; a real meter adds its own turnaround (not modelled: 0 ms), which favours fewer requests further.' +
        "\n'raw pty ms/request' is the same exchange without emulated wire time: our stack's overhead per request, including the 3.5-char gap timer." +
        `\nMachine load while measuring (1-min load average, ${os.cpus().length} CPUs): ${os.loadavg()[0].toFixed(1)}; on a busy machine the median carries scheduler noise, the min does not.`,
    );
  } finally {
    await bus.close();
    await raw.close();
    await sim.stop();
    await rawSim.stop();
    await pair.stop();
    await rawPair.stop();
    removeDir(pair.dir);
    removeDir(rawPair.dir);
  }
}

await main();
