// DSMR P1 smart meters as a meter source: one meter per P1 bus (serial port or TCP serial
// bridge). The meter pushes telegrams (DSMR 5: every second, DSMR 4: every 10 s); each whole,
// checked telegram replaces the latest one, and every poll slot publishes the latest if it is
// new, so the cadence is poll.interval_ms whatever the meter's (sampled, not flooded). A slot
// without a new telegram is a miss; offline_after_misses of them make the meter offline.
import { Counter, Gauge } from 'prom-client';
import type { BusConfig } from '../config/types.js';
import type { MeterSample, MeterState, MeterStatus } from '../domain.js';
import type { Reading } from '../modbus/sanity.js';
import type { LoopHandle } from '../ops/systemd/liveness.js';
import type { BusScanView, ModuleViews } from '../ops/observability/views.js';
import { acceptReading, freshBookkeeping, meterMetrics, meterStatus, setMeterState, type MeterBookkeeping, type MeterMetrics } from '../sources/meter-bookkeeping.js';
import { SlotTimer } from '../sources/slot-timer.js';
import type { MeterIdentity, MeterSource, MeterSourceDeps } from '../sources/source.js';
import { P1Connection } from './connection.js';
import { TelegramFramer } from './framer.js';
import { crcRequired, p1Line } from './line-settings.js';
import { p1Identity, p1Reading, type P1Identity, type P1Reading } from './measurements.js';
import { parseTelegram, TelegramParseError } from './telegram.js';

/** A household connection is at most 3 × 80 A; a P1 power beyond this is a garbled telegram. */
export const P1_MAX_POWER_W = 100_000;
/** Disagreement logs about the meter's clock, at most this often per meter. */
const CLOCK_LOG_EVERY_MS = 600_000;
const DROP_LOG_EVERY_MS = 60_000;

interface Latest {
  readonly reading: P1Reading;
  readonly receivedAtMs: number;
}

interface P1Meter extends MeterBookkeeping {
  readonly bus: BusConfig;
  readonly framer: TelegramFramer;
  readonly connection: P1Connection;
  latest: Latest | null;
  published: Latest | null;
  identity: P1Identity | null;
  lastClockLogMs: number;
  dropsSinceLog: number;
  lastDropLogMono: number;
}

export class P1Source implements MeterSource {
  readonly name = 'p1';
  readonly views = { meters: () => this.statuses(), busScan: () => this.busScan() } satisfies ModuleViews;
  private readonly meters: P1Meter[] = [];
  private slotTimer: SlotTimer | null = null;
  private loop: LoopHandle | null = null;
  private readonly m: MeterMetrics & {
    telegrams: Counter<'bus' | 'outcome'>;
    clockSkew: Counter<'resource_id'>;
    clockOffset: Gauge<'resource_id'>;
  };

  constructor(private readonly deps: MeterSourceDeps) {
    const registers = [deps.metrics];
    this.m = {
      telegrams: new Counter({ name: 'metergate_p1_telegrams_total', help: 'P1 telegrams received, by outcome: ok, or why one was dropped whole (crc, missing_crc, truncated, overlong, garbled, invalid)', labelNames: ['bus', 'outcome'], registers }),
      clockSkew: new Counter({ name: 'metergate_p1_meter_clock_disagreements_total', help: "Telegrams whose meter clock (0-0:1.0.0) differs from the gateway's by more than clock.step_tolerance_s", labelNames: ['resource_id'], registers }),
      clockOffset: new Gauge({ name: 'metergate_p1_meter_clock_offset_seconds', help: "The meter's clock minus the gateway's at the last telegram", labelNames: ['resource_id'], registers }),
      ...meterMetrics(deps.metrics),
    };
  }

  async start(): Promise<void> {
    const { config, logger } = this.deps;
    for (const meterConfig of config.meters) {
      const bus = config.buses.find((b) => b.name === meterConfig.bus);
      if (!bus) continue;
      const framer = new TelegramFramer({ requireCrc: crcRequired(p1Line(bus)) });
      const meter: P1Meter = {
        ...freshBookkeeping(meterConfig),
        bus,
        framer,
        connection: new P1Connection({ bus, logger, reopenMaxMs: Math.min(5_000, Math.floor(config.poll.interval_ms / 2)), onData: (text) => this.received(meter, text) }),
        latest: null,
        published: null,
        identity: null,
        lastClockLogMs: Number.NEGATIVE_INFINITY,
        dropsSinceLog: 0,
        lastDropLogMono: Number.NEGATIVE_INFINITY,
      };
      this.m.failures.inc({ resource_id: meterConfig.resource_id, bus: bus.name }, 0);
      this.m.clockSkew.inc({ resource_id: meterConfig.resource_id }, 0);
      for (const outcome of ['ok', 'crc', 'missing_crc', 'truncated', 'overlong', 'garbled', 'invalid']) this.m.telegrams.inc({ bus: bus.name, outcome }, 0);
      this.meters.push(meter);
    }
    for (const meter of this.meters) meter.connection.open();
    this.loop = this.deps.liveness?.register('p1-poll', 3 * config.poll.interval_ms) ?? null;
    this.slotTimer = new SlotTimer(this.deps.clock, config.poll.interval_ms, () => this.tick());
    this.slotTimer.start();
    logger.info({ meters: this.meters.map((m) => ({ resource_id: m.config.resource_id, bus: m.bus.name, address: m.connection.address, line: p1Line(m.bus) })) }, 'P1 reading started');
  }

  async stop(): Promise<void> {
    this.loop?.unregister();
    this.loop = null;
    this.slotTimer?.stop();
    this.slotTimer = null;
    await Promise.all(this.meters.map((m) => m.connection.close()));
  }

  statuses(): MeterStatus[] {
    return this.meters.map(meterStatus);
  }

  busScan(): BusScanView[] {
    return this.deps.config.buses.map((bus) => {
      const online = this.meters.filter((m) => m.bus.name === bus.name && m.state === 'online');
      return {
        bus: bus.name,
        port: bus.type === 'p1' ? (bus.port ?? '') : `${bus.host}:${bus.tcp_port}`,
        unit_ids: online.map((m) => m.config.unit_id),
        devices: online.map((m) => ({ unit_id: m.config.unit_id, profile: m.config.profile })),
      };
    });
  }

  identity(resourceId: string): MeterIdentity | null | undefined {
    const meter = this.meters.find((m) => m.config.resource_id === resourceId);
    if (!meter) return undefined;
    const id = meter.identity;
    return id ? { vendor: id.vendor, model: id.model, serialNumber: id.meterId, firmware: id.dsmrVersion ? `DSMR ${id.dsmrVersion}` : null } : null;
  }

  /** Bytes from the line: whole checked telegrams replace the latest; drops are counted and logged. */
  private received(meter: P1Meter, text: string): void {
    const bus = meter.bus.name;
    for (const event of meter.framer.push(text)) {
      if (event.kind === 'dropped') {
        this.m.telegrams.inc({ bus, outcome: event.reason });
        this.dropped(meter, event.reason, { bytes: event.bytes });
        continue;
      }
      const receivedAtMs = this.deps.clock.now();
      try {
        const telegram = parseTelegram(event.text);
        const reading = p1Reading(telegram);
        meter.identity = p1Identity(telegram);
        meter.latest = { reading, receivedAtMs };
        this.m.telegrams.inc({ bus, outcome: 'ok' });
        this.checkMeterClock(meter, reading, receivedAtMs);
      } catch (err) {
        if (!(err instanceof TelegramParseError)) throw err;
        this.m.telegrams.inc({ bus, outcome: 'invalid' });
        this.dropped(meter, 'invalid', { err: err.message });
      }
    }
  }

  /**
   * A DSMR 5 meter on a bad cable loses a telegram every second: the first drop is logged at
   * once, then one line a minute with the count (the metric has every one).
   */
  private dropped(meter: P1Meter, reason: string, detail: Record<string, unknown>): void {
    meter.dropsSinceLog++;
    const now = performance.now();
    if (now - meter.lastDropLogMono < DROP_LOG_EVERY_MS) return;
    this.deps.logger.info({ bus: meter.bus.name, reason, ...detail, dropped_since_last_log: meter.dropsSinceLog }, 'P1 telegram dropped');
    meter.dropsSinceLog = 0;
    meter.lastDropLogMono = now;
  }

  /** The meter keeps its own clock (synchronised by the grid operator): a large disagreement is worth a look. */
  private checkMeterClock(meter: P1Meter, reading: P1Reading, receivedAtMs: number): void {
    if (reading.meterTimeMs === null) return;
    const offsetMs = reading.meterTimeMs - receivedAtMs;
    const resource_id = meter.config.resource_id;
    this.m.clockOffset.set({ resource_id }, offsetMs / 1000);
    if (Math.abs(offsetMs) <= this.deps.config.clock.step_tolerance_s * 1000) return;
    this.m.clockSkew.inc({ resource_id });
    if (receivedAtMs - meter.lastClockLogMs < CLOCK_LOG_EVERY_MS) return;
    meter.lastClockLogMs = receivedAtMs;
    this.deps.logger.warn(
      { resource_id, meter_time: new Date(reading.meterTimeMs).toISOString(), gateway_time: new Date(receivedAtMs).toISOString(), offset_s: Math.round(offsetMs / 1000) },
      "the P1 meter's clock disagrees with the gateway's (check NTP; readings keep the gateway's time)",
    );
  }

  private tick(): void {
    this.loop?.tick();
    for (const meter of this.meters) this.sample(meter);
    // Every sample of this slot was handed on: the store may commit them together.
    this.deps.events.emit('poll.tick-done', { source: this.name });
  }

  /** One slot of one meter: the latest telegram if it is new since the last slot, else a miss. */
  private sample(meter: P1Meter): void {
    const labels = { resource_id: meter.config.resource_id, bus: meter.bus.name };
    this.m.polls.inc(labels);
    const latest = meter.latest;
    if (latest === null || latest === meter.published) {
      this.m.failures.inc(labels);
      meter.misses++;
      if (meter.misses >= this.deps.config.poll.offline_after_misses && meter.state !== 'offline') {
        this.setState(meter, 'offline');
        this.deps.logger.warn({ ...labels, misses: meter.misses }, 'P1 meter offline (no whole telegram)');
      }
      return;
    }
    meter.published = latest;
    meter.misses = 0;
    meter.lastAnsweredAtMs = latest.receivedAtMs;
    if (meter.state === 'offline') this.deps.logger.info(labels, 'P1 meter sends again');
    this.setState(meter, 'online');
    const values = Object.fromEntries(latest.reading.metrics.map((x) => [x.name, x.value]));
    const reading: Reading = { sampledAtMs: latest.receivedAtMs, values };
    if (!acceptReading(meter, reading, meter.config.max_power_w ?? P1_MAX_POWER_W, { dropped: this.m.dropped, logger: this.deps.logger, logFields: labels })) return;
    const sample: MeterSample = { resourceId: meter.config.resource_id, sampledAtMs: latest.receivedAtMs, metrics: latest.reading.metrics };
    meter.lastSample = sample;
    this.deps.events.emit('sample.taken', sample);
  }

  private setState(meter: P1Meter, state: MeterState): void {
    setMeterState(meter, state, { online: this.m.online, events: this.deps.events, source: this.name, statuses: () => this.statuses() });
  }
}
