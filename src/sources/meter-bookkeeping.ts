// What every meter source keeps per meter and does the same way: the status it shows, the
// per-meter metrics (same names and labels, so one series per meter whatever its source), the
// sanity check with its meter-reset rule, and state changes announced on the event bus.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { MeterConfig } from '../config/types.js';
import type { MeterSample, MeterState, MeterStatus } from '../domain.js';
import type { EventBus } from '../events.js';
import type { Logger } from '../log.js';
import { checkReading, type Reading } from '../modbus/sanity.js';

/** Consecutive "counter went backwards" samples after which the new counter is believed (meter replaced or reset). */
const ACCEPT_COUNTER_RESET_AFTER = 3;

/** A source's own record of one meter (the source adds what its bus needs). */
export interface MeterBookkeeping {
  readonly config: MeterConfig;
  state: MeterState;
  misses: number;
  lastAnsweredAtMs: number | null;
  lastSample: MeterSample | null;
  lastAccepted: Reading | null;
  backwardsStreak: number;
}

/** The bookkeeping of a meter not heard from yet. */
export function freshBookkeeping(config: MeterConfig): MeterBookkeeping {
  return { config, state: 'unknown', misses: 0, lastAnsweredAtMs: null, lastSample: null, lastAccepted: null, backwardsStreak: 0 };
}

/**
 * The bookkeeping of a meter after a restart: the last reading the store kept (newest first) is
 * what the next one is checked against, so a counter lower than before the restart is caught
 * (and believed after ACCEPT_COUNTER_RESET_AFTER readings, as while running).
 */
export function bookkeepingFromStore(config: MeterConfig, stored: readonly MeterSample[]): MeterBookkeeping {
  const last = stored[0];
  const lastAccepted: Reading | null = last ? { sampledAtMs: last.sampledAtMs, values: Object.fromEntries(last.metrics.map((m) => [m.name, m.value])) } : null;
  return { ...freshBookkeeping(config), lastAccepted };
}

export function meterStatus(m: MeterBookkeeping): MeterStatus {
  return {
    resourceId: m.config.resource_id,
    bus: m.config.bus,
    unitId: m.config.unit_id,
    profile: m.config.profile,
    state: m.state,
    lastAnsweredAtMs: m.lastAnsweredAtMs,
    lastSample: m.lastSample,
    consecutiveMisses: m.misses,
  };
}

export interface MeterMetrics {
  readonly polls: Counter<'resource_id' | 'bus'>;
  readonly failures: Counter<'resource_id' | 'bus'>;
  readonly dropped: Counter<'resource_id' | 'reason'>;
  readonly online: Gauge<'resource_id'>;
}

/** The per-meter metrics in `registry`, made by whichever source comes first. */
export function meterMetrics(registry: Registry): MeterMetrics {
  const registers = [registry];
  return {
    polls: getOrCreate(registry, 'metergate_meter_polls_total', () => new Counter({ name: 'metergate_meter_polls_total', help: 'Meter polls attempted', labelNames: ['resource_id', 'bus'], registers })),
    failures: getOrCreate(registry, 'metergate_meter_poll_failures_total', () => new Counter({ name: 'metergate_meter_poll_failures_total', help: 'Meter polls that got no complete answer', labelNames: ['resource_id', 'bus'], registers })),
    dropped: getOrCreate(registry, 'metergate_meter_samples_dropped_total', () => new Counter({ name: 'metergate_meter_samples_dropped_total', help: 'Samples dropped by sanity checks, by reason', labelNames: ['resource_id', 'reason'], registers })),
    online: getOrCreate(registry, 'metergate_meter_online', () => new Gauge({ name: 'metergate_meter_online', help: '1 while the meter answers, 0 when offline', labelNames: ['resource_id'], registers })),
  };
}

function getOrCreate<T>(registry: Registry, name: string, create: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? create();
}

/**
 * The sanity check of a new reading against the meter's last accepted one. A counter that stays
 * lower for ACCEPT_COUNTER_RESET_AFTER readings is a reset meter and believed; anything else
 * implausible is counted, logged with `logFields` and dropped. True when the reading is accepted.
 */
export function acceptReading(
  m: MeterBookkeeping,
  reading: Reading,
  maxPowerW: number,
  out: { readonly dropped: MeterMetrics['dropped']; readonly logger: Logger; readonly logFields: Record<string, unknown> },
): boolean {
  const verdict = checkReading(reading, m.lastAccepted, { maxPowerW });
  if (!verdict.ok) {
    if (verdict.reason === 'energy_backwards' && ++m.backwardsStreak >= ACCEPT_COUNTER_RESET_AFTER) {
      out.logger.warn({ ...out.logFields, detail: verdict.detail }, 'energy counter stayed lower; accepting it as a meter reset');
    } else {
      out.dropped.inc({ resource_id: m.config.resource_id, reason: verdict.reason });
      out.logger.warn({ ...out.logFields, reason: verdict.reason, detail: verdict.detail }, 'implausible sample dropped');
      return false;
    }
  }
  m.backwardsStreak = 0;
  m.lastAccepted = reading;
  return true;
}

/** A changed state sets the online gauge and is announced (meter.state-changed with all the source's statuses). */
export function setMeterState(
  m: MeterBookkeeping,
  state: MeterState,
  to: { readonly online: MeterMetrics['online']; readonly events: EventBus; readonly source: string; readonly statuses: () => MeterStatus[] },
): void {
  if (m.state === state) return;
  m.state = state;
  to.online.set({ resource_id: m.config.resource_id }, state === 'online' ? 1 : 0);
  to.events.emit('meter.state-changed', { source: to.source, statuses: to.statuses() });
}
