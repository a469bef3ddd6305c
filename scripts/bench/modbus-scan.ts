// Benchmark: a full 247-unit-id sweep at 9600 baud, as `metergate scan` does it with its
// default per-id timeout, against the simulator on a pty with emulated wire time (three
// meters answering). Target: under 60 s.   npx tsx scripts/bench/modbus-scan.ts [timeoutMs=150]
import { createLogger } from '../../src/log.js';
import { parseUnitIds, scan } from '../../src/modbus/scan.js';
import { startSim } from '../../test/helpers/sim-process.js';
import { removeDir, startPtyPair } from '../../test/helpers/socat.js';

const timeoutMs = Number(process.argv[2] ?? 150);
const pair = await startPtyPair();
const sim = await startSim(['--serial', pair.b, '--unit', '1:sdm630,42:em340,200:abb-b23', '--baud', '9600', '--emulate-wire-time', '--turnaround-ms', '20']);
try {
  const [result] = await scan({
    port: pair.a,
    settings: [{ baudRate: 9600, parity: 'even', stopBits: 1, dataBits: 8 }],
    unitIds: parseUnitIds('1-247'),
    timeoutMs,
    logger: createLogger('silent'),
  });
  const s = result.elapsedMs / 1000;
  console.log(`247-id sweep at 9600 8E1, timeout ${timeoutMs} ms, meter turnaround 20 ms: ${s.toFixed(1)} s (limit 60 s: ${(s / 60).toFixed(2)}x)`);
  console.log(`found: ${result.devices.map((d) => `${d.unitId}=${d.profile} (${d.identifiedBy})`).join(', ')}`);
  console.log(`bound: 247 x (timeout + gap) = ${((247 * (timeoutMs + 5)) / 1000).toFixed(1)} s when nothing answers`);
} finally {
  await sim.stop();
  await pair.stop();
  removeDir(pair.dir);
}
