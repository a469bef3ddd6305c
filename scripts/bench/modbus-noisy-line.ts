// Benchmark: share of poll slots that publish a sample when bytes on an RTU line are corrupted.
//   npx tsx scripts/bench/modbus-noisy-line.ts [slots=150] [rates=0,0.01,0.02,0.05]
// One SDM630 simulator per rate behind scripts/faults/noisy-line.ts (each byte corrupted with
// the given probability, both directions), all polled at once by one real MeterPoller. Time is
// scaled 1:5 from the defaults so a run takes minutes: interval 2 s (10 s), reprobe 2 s
// doubling to 60 s (10 s to 300 s), offline after 3 misses, retries 1, timeout 200 ms. The
// clean line (rate 0) is the baseline measured in the same run.
import os from 'node:os';
import { Registry } from 'prom-client';
import { systemClock } from '../../src/clock.js';
import { validateConfig } from '../../src/config/load.js';
import type { MeterSample } from '../../src/domain.js';
import { EventBus } from '../../src/events.js';
import { createLogger } from '../../src/log.js';
import { MeterPoller } from '../../src/modbus/poller.js';
import { slotAt } from '../../src/modbus/slots.js';
import { startNoisyLine, type NoisyLine } from '../../test/helpers/noisy-line.js';
import { startSim, type SimProcess } from '../../test/helpers/sim-process.js';

const SLOTS = Number(process.argv[2] ?? 150);
const RATES = (process.argv[3] ?? '0,0.01,0.02,0.05').split(',').map(Number);
const INTERVAL_MS = 2000;
const ids = RATES.map((_, i) => `00000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`);

interface Row {
  rate: number;
  published: number;
  longestGap: number;
  offlineSlots: number;
  offlineEpisodes: number;
}

async function main(): Promise<void> {
  const lines: NoisyLine[] = [];
  const sims: SimProcess[] = [];
  for (const [i, rate] of RATES.entries()) {
    const line = await startNoisyLine(0, 1000 + i);
    lines.push(line);
    sims.push(await startSim(['--serial', line.meterSide, '--unit', '1']));
    void rate;
  }
  const config = validateConfig(
    {
      organization_id: '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11',
      poll: { interval_ms: INTERVAL_MS, offline_after_misses: 3, reprobe_initial_ms: 2000, reprobe_max_ms: 60_000 },
      buses: RATES.map((_, i) => ({ name: `line${i}`, type: 'rtu', port: lines[i].gatewaySide, timeout_ms: 200, retries: 1 })),
      meters: RATES.map((_, i) => ({ resource_id: ids[i], bus: `line${i}`, unit_id: 1, profile: 'sdm630' })),
    },
    'bench',
    {},
  );
  const samples: MeterSample[] = [];
  const offlineSince = new Map<string, number>();
  const offlineSlots = new Map<string, number>(ids.map((id) => [id, 0]));
  const offlineEpisodes = new Map<string, number>(ids.map((id) => [id, 0]));
  const logger = createLogger(process.env.METERGATE_LOG_LEVEL ?? 'silent');
  const events = new EventBus(logger);
  const poller = new MeterPoller({ config, logger, clock: systemClock, metrics: new Registry(), events });
  events.on('sample.taken', (s) => samples.push(s));
  events.on('meter.state-changed', ({ statuses }) => {
    for (const s of statuses) {
      const slot = slotAt(Date.now(), INTERVAL_MS);
      if (s.state === 'offline' && !offlineSince.has(s.resourceId)) {
        offlineSince.set(s.resourceId, slot);
        offlineEpisodes.set(s.resourceId, offlineEpisodes.get(s.resourceId)! + 1);
      } else if (s.state !== 'offline' && offlineSince.has(s.resourceId)) {
        offlineSlots.set(s.resourceId, offlineSlots.get(s.resourceId)! + slot - offlineSince.get(s.resourceId)!);
        offlineSince.delete(s.resourceId);
      }
    }
  });
  await poller.start();
  // the first samples on clean lines, then the noise
  const deadline = Date.now() + 30_000;
  while (!ids.every((id) => samples.some((s) => s.resourceId === id))) {
    if (Date.now() > deadline) throw new Error('no first sample from every meter');
    await new Promise((r) => setTimeout(r, 100));
  }
  await Promise.all(RATES.map((rate, i) => lines[i].setRate(rate)));
  const first = slotAt(Date.now(), INTERVAL_MS) + 1;
  const last = first + SLOTS - 1;
  process.stderr.write(`measuring ${SLOTS} slots of ${INTERVAL_MS} ms at byte error rates ${RATES.join(', ')}\n`);
  while (slotAt(Date.now(), INTERVAL_MS) <= last + 1) await new Promise((r) => setTimeout(r, 500));
  const stats = await Promise.all(lines.map((l) => l.stats()));
  await poller.stop();
  for (const [id, since] of offlineSince) offlineSlots.set(id, offlineSlots.get(id)! + last + 1 - Math.max(since, first));

  const rows: Row[] = RATES.map((rate, i) => {
    const slots = new Set(samples.filter((s) => s.resourceId === ids[i]).map((s) => slotAt(s.sampledAtMs, INTERVAL_MS)));
    let published = 0;
    let gap = 0;
    let longestGap = 0;
    for (let slot = first; slot <= last; slot++) {
      if (slots.has(slot)) {
        published++;
        gap = 0;
      } else longestGap = Math.max(longestGap, ++gap);
    }
    return { rate, published, longestGap, offlineSlots: offlineSlots.get(ids[i])!, offlineEpisodes: offlineEpisodes.get(ids[i])! };
  });
  const base = rows.find((r) => r.rate === 0)?.published;
  console.log(`load average ${os.loadavg()[0].toFixed(1)}, ${SLOTS} slots each`);
  console.log('| byte errors | measured | slots published | vs clean line | longest gap (slots) | offline episodes | slots offline |');
  console.log('|---|---|---|---|---|---|---|');
  for (const [i, r] of rows.entries()) {
    const measured = stats[i].bytes ? ((100 * stats[i].corrupted) / stats[i].bytes).toFixed(2) : '-';
    const ratio = base ? `${(r.published / base).toFixed(2)}×` : '-';
    console.log(`| ${(100 * r.rate).toFixed(0)} % | ${measured} % | ${((100 * r.published) / SLOTS).toFixed(1)} % | ${ratio} | ${r.longestGap} | ${r.offlineEpisodes} | ${r.offlineSlots} |`);
  }
  await Promise.all(sims.map((s) => s.stop()));
  await Promise.all(lines.map((l) => l.stop()));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
