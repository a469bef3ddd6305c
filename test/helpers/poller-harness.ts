// Runs a real MeterPoller on a config and records what it produces.
import { Registry } from 'prom-client';
import { systemClock, type Clock } from '../../src/clock.js';
import { validateConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/types.js';
import type { MeterSample } from '../../src/domain.js';
import { EventBus } from '../../src/events.js';
import { createLogger } from '../../src/log.js';
import { MeterPoller } from '../../src/modbus/poller.js';
import { Liveness } from '../../src/ops/systemd/liveness.js';

export const ORG = '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11';
export const METER_A = '0b6f2a4e-1c3d-4e5f-8a9b-0c1d2e3f4a5b';
export const METER_B = '1c7a3b5f-2d4e-4f60-9b0c-1d2e3f4a5b6c';
export const METER_C = '2d8b4c60-3e5f-4071-8c1d-2e3f4a5b6c7d';

export interface Harness {
  readonly poller: MeterPoller;
  /** The poller's event bus: sample.taken, poll.tick-done, meter.state-changed. */
  readonly events: EventBus;
  readonly config: Config;
  readonly samples: MeterSample[];
  readonly registry: Registry;
  readonly liveness: Liveness;
  samplesOf(resourceId: string): MeterSample[];
  waitFor(check: () => boolean, what: string, timeoutMs?: number): Promise<void>;
  metric(name: string, labels?: Record<string, string>): Promise<number>;
  stop(): Promise<void>;
}

export interface HarnessOptions {
  /** The poller's wall clock (the system clock unless given). */
  readonly clock?: Clock;
  /** Receives every log record at warn and above (parsed), instead of the silent logger. */
  readonly onLog?: (record: { level: string; msg: string } & Record<string, unknown>) => void;
}

export async function startPoller(raw: Record<string, unknown>, opts: HarnessOptions = {}): Promise<Harness> {
  const config = validateConfig({ organization_id: ORG, log_level: 'warn', ...raw }, 'test', {});
  const samples: MeterSample[] = [];
  const registry = new Registry();
  const liveness = new Liveness();
  const onLog = opts.onLog;
  const logger = onLog
    ? createLogger('warn', { write: (line: string) => onLog(JSON.parse(line) as { level: string; msg: string }) })
    : createLogger(process.env.METERGATE_LOG_LEVEL ?? 'silent');
  const events = new EventBus(logger);
  const poller = new MeterPoller({
    config,
    logger,
    clock: opts.clock ?? systemClock,
    metrics: registry,
    events,
    liveness,
  });
  events.on('sample.taken', (s) => samples.push(s));
  await poller.start();
  return {
    poller,
    events,
    config,
    samples,
    registry,
    liveness,
    samplesOf: (id) => samples.filter((s) => s.resourceId === id),
    async waitFor(check, what, timeoutMs = 20_000) {
      const until = Date.now() + timeoutMs;
      while (!check()) {
        if (Date.now() > until) throw new Error(`timed out waiting for ${what}; statuses: ${JSON.stringify(poller.statuses().map((s) => [s.resourceId.slice(0, 4), s.state, s.consecutiveMisses]))}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async metric(name, labels = {}) {
      const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
      const values = (m?.values ?? []) as Array<{ value: number; labels: Record<string, string | number> }>;
      return values.filter((v) => Object.entries(labels).every(([k, l]) => String(v.labels[k]) === l)).reduce((a, v) => a + v.value, 0);
    },
    stop: () => poller.stop(),
  };
}

export function metricValue(sample: MeterSample, name: string): number | undefined {
  return sample.metrics.find((m) => m.name === name)?.value;
}

/** The poller's state of one meter (online, offline, ...), for waiting on transitions. */
export function stateOf(h: Pick<Harness, 'poller'>, resourceId: string): string | undefined {
  return h.poller.statuses().find((s) => s.resourceId === resourceId)?.state;
}
