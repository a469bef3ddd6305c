// DSMR P1 smart meters as a meter source: one meter per P1 bus (serial port or TCP serial
// bridge). The meter pushes telegrams (DSMR 5: every second, DSMR 4: every 10 s); each whole,
// checked telegram replaces the latest one, and every poll slot publishes the latest if it is
// new, so the cadence is poll.interval_ms whatever the meter's (sampled, not flooded). A slot
// without a new telegram is a miss; offline_after_misses of them make the meter offline.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { BusConfig, MeterConfig } from '../config/types.js';
import type { MeterSample, MeterState, MeterStatus } from '../domain.js';
import type { Reading } from '../modbus/sanity.js';
import type { LoopHandle } from '../ops/systemd/liveness.js';
import type { BusScanView, ModuleViews } from '../ops/observability/views.js';
import { acceptReading, bookkeepingFromStore, freshBookkeeping, meterMetrics, meterStatus, setMeterState, type MeterBookkeeping, type MeterMetrics } from '../sources/meter-bookkeeping.js';
import { SlotTimer } from '../sources/slot-timer.js';
import type { MeterIdentity, MeterSource, MeterSourceDeps } from '../sources/source.js';
import { P1Connection } from './connection.js';
import { CHANNEL_BELIEVE_AFTER, channelPlausibilityFrom, judgeChannelReading, type ChannelPlausibility, type ChannelValue } from './channel-plausibility.js';
import { diagnoseP1, powerAbsent, type LineObservation } from './diagnosis.js';
import { isModeC, p1Line } from './line-settings.js';
import { mbusChannels, type MbusChannel } from './mbus.js';
import type { P1Identity, P1Reading } from './measurements.js';
import type { P1Demand } from './demand.js';
import { telegramReader, type ReaderEvent, type TelegramReader } from './reader.js';
import { ModeCSession } from './mode-c-session.js';
import type { Telegram } from './telegram.js';

/** A household connection is at most 3 × 80 A; a P1 power beyond this is a garbled telegram. */
export const P1_MAX_POWER_W = 100_000;
/** Disagreement logs about the meter's clock, at most this often per meter. */
const CLOCK_LOG_EVERY_MS = 600_000;
const DROP_LOG_EVERY_MS = 60_000;
/** A channel's capture time may be this far after the telegram that carries it (clock drift, DST), no further. */
const CHANNEL_FUTURE_MS = 3_600_000;
/** ... and at most this far before it (hourly DSMR 4 channels are up to an hour old). */
const CHANNEL_MAX_AGE_MS = 24 * 3_600_000;

interface Latest {
  readonly reading: P1Reading;
  readonly receivedAtMs: number;
}

/** One M-Bus channel of a P1 meter, published as its own resource (config `channels`). */
interface P1Channel extends MeterBookkeeping {
  readonly number: number;
  /** The channel as the newest whole telegram carried it, and when that came. */
  latest: MbusChannel | null;
  heardAtMs: number | null;
  /** The capture time of the reading last handed on: a reading is sent once per capture time. */
  publishedCaptureMs: number;
  /** A capture time refused as too far from the telegram's (logged once), shown as the channel's problem. */
  staleCaptureMs: number | null;
  /** What the next reading is judged against (channel-plausibility.ts); at start the last ones the store kept. */
  plausibility: ChannelPlausibility;
  /** Why the last reading was not handed on as implausible; null once one is again. */
  implausible: string | null;
}

interface P1Meter extends MeterBookkeeping {
  readonly bus: BusConfig;
  readonly reader: TelegramReader;
  readonly connection: P1Connection;
  latest: Latest | null;
  published: Latest | null;
  identity: P1Identity | null;
  lastClockLogMs: number;
  dropsSinceLog: number;
  /** What the line delivered since the last telegram with electricity (for the one-line diagnosis). */
  observed: { bytes: number; drops: Record<string, number>; smlSeen: boolean; tail: string };
  /** When the last whole telegram without electricity came (a heat interface unit), if it is newer than the slot's. */
  wholeWithoutElectricityAtMs: number | null;
  readonly channels: P1Channel[];
  lastDropLogMono: number;
  /** An IEC 62056-21 mode C meter (bus `mode: C`) is asked each slot; null: the meter pushes. */
  modeC: ModeCSession | null;
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
  /** The Belgian capacity objects of each meter's last published telegram, for /metrics (p1/demand.ts). */
  private readonly demands = new Map<string, { readonly sampledAtMs: number; readonly demand: P1Demand }>();

  constructor(private readonly deps: MeterSourceDeps) {
    const registers = [deps.metrics];
    this.m = {
      telegrams: new Counter({ name: 'metergate_p1_telegrams_total', help: 'P1 telegrams (and mode C readouts) received, by outcome: ok, or why one was dropped whole (crc, missing_crc, truncated, overlong, garbled, invalid, unknown_layout, no_electricity; mode C: bcc, no_answer)', labelNames: ['bus', 'outcome'], registers }),
      clockSkew: new Counter({ name: 'metergate_p1_meter_clock_disagreements_total', help: "Telegrams whose meter clock (0-0:1.0.0) differs from the gateway's by more than clock.step_tolerance_s", labelNames: ['resource_id'], registers }),
      clockOffset: new Gauge({ name: 'metergate_p1_meter_clock_offset_seconds', help: "The meter's clock minus the gateway's at the last telegram", labelNames: ['resource_id'], registers }),
      ...meterMetrics(deps.metrics),
    };
    this.registerDemandGauges(registers);
  }

  /**
   * The Belgian capacity objects as gauges, read at scrape time from each meter's last published
   * telegram: not metrics of the MQTT measurement (docs/p1.md "Belgian capacity tariff objects").
   */
  private registerDemandGauges(registers: Registry[]): void {
    const demands = () => [...this.demands.entries()];
    new Gauge({
      name: 'metergate_p1_quarter_hour_average_demand_kw',
      help: "The running quarter-hour's average import demand the meter reports (1-0:1.4.0, Belgian e-MUCS), kW",
      labelNames: ['resource_id'] as const,
      registers,
      collect() {
        this.reset();
        for (const [resource_id, d] of demands()) if (d.demand.quarterHourAverageKw !== null) this.set({ resource_id }, d.demand.quarterHourAverageKw);
      },
    });
    new Gauge({
      name: 'metergate_p1_month_peak_kw',
      help: "This month's highest quarter-hour average import demand so far (1-0:1.6.0), kW: the Flemish capacity tariff bills it",
      labelNames: ['resource_id'] as const,
      registers,
      collect() {
        this.reset();
        for (const [resource_id, d] of demands()) if (d.demand.monthPeak) this.set({ resource_id }, d.demand.monthPeak.kw);
      },
    });
    new Gauge({
      name: 'metergate_p1_month_peak_timestamp_seconds',
      help: "When this month's peak quarter-hour was (1-0:1.6.0's time, meter clock), Unix seconds",
      labelNames: ['resource_id'] as const,
      registers,
      collect() {
        this.reset();
        for (const [resource_id, d] of demands()) if (d.demand.monthPeak?.atMs != null) this.set({ resource_id }, d.demand.monthPeak.atMs / 1000);
      },
    });
    new Gauge({
      name: 'metergate_p1_past_month_peak_kw',
      help: "Earlier months' peaks the meter reports (0-0:98.1.0, up to 13), kW, by billing month (YYYY-MM, Belgian time)",
      labelNames: ['resource_id', 'month'] as const,
      registers,
      collect() {
        this.reset();
        for (const [resource_id, d] of demands()) for (const p of d.demand.history) if (p.month !== null) this.set({ resource_id, month: p.month }, p.kw);
      },
    });
  }

  async start(): Promise<void> {
    const { config, logger } = this.deps;
    for (const meterConfig of config.meters) {
      const bus = config.buses.find((b) => b.name === meterConfig.bus);
      // A channel entry (config/load.ts expandChannels) is read from its meter's telegrams, not a line of its own.
      if (!bus || meterConfig.channel) continue;
      const reader = telegramReader(p1Line(bus));
      const meter: P1Meter = {
        // Checked from the start against the last reading stored before a restart.
        ...bookkeepingFromStore(meterConfig, this.deps.storedReadings?.(meterConfig.resource_id, 1) ?? []),
        bus,
        reader,
        connection: new P1Connection({ bus, logger, reopenMaxMs: Math.min(5_000, Math.floor(config.poll.interval_ms / 2)), onData: (text) => (meter.modeC ? this.modeCBytes(meter, meter.modeC, text) : this.received(meter, text)) }),
        latest: null,
        published: null,
        identity: null,
        lastClockLogMs: Number.NEGATIVE_INFINITY,
        dropsSinceLog: 0,
        lastDropLogMono: Number.NEGATIVE_INFINITY,
        observed: { bytes: 0, drops: {}, smlSeen: false, tail: '' },
        wholeWithoutElectricityAtMs: null,
        channels: config.meters
          .filter((c) => c.channel?.of === meterConfig.resource_id)
          .map((c) => this.channelFromStore(c)),
        modeC: null,
      };
      if (isModeC(bus)) meter.modeC = new ModeCSession({ connection: meter.connection, onEvent: (event) => this.handle(meter, [event]) });
      this.m.failures.inc({ resource_id: meterConfig.resource_id, bus: bus.name }, 0);
      this.m.clockSkew.inc({ resource_id: meterConfig.resource_id }, 0);
      for (const outcome of ['ok', 'crc', 'missing_crc', 'truncated', 'overlong', 'garbled', 'invalid', 'unknown_layout', 'no_electricity', ...(isModeC(bus) ? ['bcc', 'no_answer'] : [])]) this.m.telegrams.inc({ bus: bus.name, outcome }, 0);
      this.meters.push(meter);
    }
    for (const meter of this.meters) meter.connection.open();
    this.loop = this.deps.liveness?.register('p1-poll', 3 * config.poll.interval_ms) ?? null;
    this.slotTimer = new SlotTimer(this.deps.clock, config.poll.interval_ms, () => this.tick());
    this.slotTimer.start();
    logger.info({ meters: this.meters.map((m) => ({ resource_id: m.config.resource_id, bus: m.bus.name, address: m.connection.address, line: p1Line(m.bus) })) }, 'P1 reading started');
  }

  /**
   * A configured channel, judged from the start against the last readings it handed on before
   * (the store's): a register that went backwards while the gateway was down is caught, and a
   * capture time already published is not published again.
   */
  private channelFromStore(c: MeterConfig): P1Channel {
    const published = this.deps.storedReadings?.(c.resource_id, 2) ?? [];
    const plausibility = channelPlausibilityFrom(published);
    if (plausibility.reference) this.deps.logger.debug({ resource_id: c.resource_id, reference: plausibility.reference }, 'M-Bus channel judged against its last stored reading');
    return {
      ...freshBookkeeping(c),
      number: c.channel!.number,
      latest: null,
      heardAtMs: null,
      publishedCaptureMs: plausibility.reference?.capturedAtMs ?? Number.NEGATIVE_INFINITY,
      staleCaptureMs: null,
      plausibility,
      implausible: null,
    };
  }

  async stop(): Promise<void> {
    this.loop?.unregister();
    this.loop = null;
    this.slotTimer?.stop();
    this.slotTimer = null;
    for (const meter of this.meters) meter.modeC?.stop();
    await Promise.all(this.meters.map((m) => m.connection.close()));
  }

  statuses(): MeterStatus[] {
    return this.meters.flatMap((m) => [
      { ...meterStatus(m), problem: this.problemOf(m), demand: this.demands.get(m.config.resource_id)?.demand ?? null },
      ...m.channels.map((c) => ({ ...meterStatus(c), problem: this.channelProblem(m, c) })),
    ]);
  }

  /** Why a channel gives no sample, in one line; null while it does. */
  private channelProblem(meter: P1Meter, c: P1Channel): string | null {
    if (c.state === 'offline') return `channel ${c.number} is not in the meter's telegrams${meter.state === 'offline' ? ' (the meter is offline)' : ''}: check meters[].channels against the meter's 0-n:24.1.0 lines`;
    if (c.latest?.skipped) return `channel ${c.number}: ${c.latest.skipped}`;
    if (c.implausible !== null) return `channel ${c.number}: reading not published, implausible: ${c.implausible} (a garbled M-Bus value, or a replaced device: believed after ${CHANNEL_BELIEVE_AFTER} readings in a row that agree)`;
    if (c.staleCaptureMs !== null) return `channel ${c.number}: its capture time ${new Date(c.staleCaptureMs).toISOString()} is far from the meter's clock (the M-Bus device stopped reporting, or its clock is unset)`;
    return null;
  }

  /** Why the meter gives no electricity sample, in one line with the fix; null while it does. */
  private problemOf(meter: P1Meter): string | null {
    if (meter.state === 'online' && meter.wholeWithoutElectricityAtMs === null) return meter.identity && meter.latest ? powerAbsent(meter.identity, meter.latest.reading) : null;
    if (meter.state === 'unknown' && meter.observed.bytes === 0) return null;
    const observation: LineObservation = { line: p1Line(meter.bus), bytes: meter.observed.bytes, drops: meter.observed.drops, smlSeen: meter.observed.smlSeen, modeC: meter.modeC !== null };
    const index = this.deps.config.buses.findIndex((b) => b.name === meter.bus.name);
    return diagnoseP1(observation, `buses[${index}] (${meter.bus.name})`)?.text ?? null;
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
    const channel = this.meters.flatMap((m) => m.channels).find((c) => c.config.resource_id === resourceId);
    if (channel) {
      const c = channel.latest;
      // DSMR relays the device type and id, not the M-Bus device's maker.
      return c ? { vendor: 'unknown', model: `M-Bus ${c.medium} meter (device type ${c.deviceType ?? 'not given'}, channel ${c.number})`, serialNumber: c.equipmentId, firmware: null } : null;
    }
    const meter = this.meters.find((m) => m.config.resource_id === resourceId);
    if (!meter) return undefined;
    const id = meter.identity;
    return id ? { vendor: id.vendor, model: id.model, serialNumber: id.meterId, firmware: id.firmware } : null;
  }

  /** Bytes from the line: whole checked telegrams replace the latest; drops are counted and logged. */
  private received(meter: P1Meter, text: string): void {
    meter.observed.bytes += text.length;
    // SML's escape sequence on any line (it survives a 7E1 reading): named in the diagnosis.
    if (!meter.observed.smlSeen) meter.observed.smlSeen = (meter.observed.tail + text).includes('\x1b\x1b\x1b\x1b');
    meter.observed.tail = text.slice(-3);
    this.handle(meter, meter.reader.push(text));
  }

  /** Bytes from a mode C meter's line: its readout under way takes them (mode-c-session.ts). */
  private modeCBytes(meter: P1Meter, session: ModeCSession, text: string): void {
    meter.observed.bytes += text.length;
    session.data(text);
  }

  /** Whole telegrams (or mode C readouts) and drops, however the line delivered them. */
  private handle(meter: P1Meter, events: readonly ReaderEvent[]): void {
    const bus = meter.bus.name;
    for (const event of events) {
      if (event.kind === 'dropped') {
        this.m.telegrams.inc({ bus, outcome: event.reason });
        this.observe(meter, event.reason);
        this.dropped(meter, event.reason, { bytes: event.bytes, ...(event.detail === undefined ? {} : { detail: event.detail }) });
        continue;
      }
      const receivedAtMs = this.deps.clock.now();
      const outcome = event.outcome;
      this.m.telegrams.inc({ bus, outcome: outcome.kind });
      if ('error' in outcome) {
        this.observe(meter, outcome.kind);
        this.dropped(meter, outcome.kind, { err: outcome.error });
        continue;
      }
      // A mode C readout reads like a mode D telegram; the status page names how it came.
      meter.identity = meter.modeC ? { ...outcome.identity, layout: 'IEC 62056-21 mode C' } : outcome.identity;
      this.channelsHeard(meter, outcome.telegram, receivedAtMs);
      if (outcome.kind === 'no_electricity') {
        // Whole telegrams, so the device is there: not a miss, but nothing to publish as electricity.
        meter.wholeWithoutElectricityAtMs = receivedAtMs;
        this.observe(meter, 'no_electricity');
        continue;
      }
      meter.latest = { reading: outcome.reading, receivedAtMs };
      meter.wholeWithoutElectricityAtMs = null;
      meter.observed = { bytes: 0, drops: {}, smlSeen: false, tail: '' };
      this.checkMeterClock(meter, outcome.reading, receivedAtMs);
    }
  }

  /** A whole telegram: each configured channel as it carries it (absent: null). */
  private channelsHeard(meter: P1Meter, telegram: Telegram, receivedAtMs: number): void {
    if (meter.channels.length === 0) return;
    const found = mbusChannels(telegram, receivedAtMs);
    for (const channel of meter.channels) {
      channel.latest = found.find((c) => c.number === channel.number) ?? null;
      if (channel.latest) channel.heardAtMs = receivedAtMs;
    }
  }

  /**
   * One slot of one channel: online while new telegrams carry it; its reading is handed on
   * once per capture time (5-minute or hourly), stamped with that time, never again.
   */
  private sampleChannel(meter: P1Meter, channel: P1Channel): void {
    const labels = { resource_id: channel.config.resource_id, bus: meter.bus.name };
    const heard = channel.heardAtMs;
    if (heard === null || heard <= (channel.lastAnsweredAtMs ?? Number.NEGATIVE_INFINITY) || channel.latest === null) {
      channel.misses++;
      if (channel.misses >= this.deps.config.poll.offline_after_misses) this.setState(channel, 'offline');
      return;
    }
    channel.misses = 0;
    channel.lastAnsweredAtMs = heard;
    this.setState(channel, 'online');
    const reading = channel.latest.reading;
    if (!reading || reading.capturedAtMs <= channel.publishedCaptureMs) return;
    // A capture time ahead of the telegram is the device's unset clock; one days old a device that
    // stopped reporting (its last value repeated). Neither is a reading of now, and a time from
    // before the gateway's build would make the clock guard distrust the clock: not handed on.
    if (reading.capturedAtMs > heard + CHANNEL_FUTURE_MS || reading.capturedAtMs < heard - CHANNEL_MAX_AGE_MS) {
      if (channel.staleCaptureMs !== reading.capturedAtMs) this.deps.logger.warn({ ...labels, captured_at: new Date(reading.capturedAtMs).toISOString() }, 'M-Bus channel reading with a capture time far from the telegram\'s: not published');
      channel.staleCaptureMs = reading.capturedAtMs;
      return;
    }
    channel.staleCaptureMs = null;
    channel.publishedCaptureMs = reading.capturedAtMs;
    if (!this.plausible(channel, reading, labels)) return;
    // Stamped no later than the telegram was heard: a value cannot be captured after it arrived,
    // and a meter clock running ahead would otherwise stamp it in the future, where the
    // publisher's clock gate quarantines it (clock.step_tolerance_s).
    const sample: MeterSample = { resourceId: channel.config.resource_id, sampledAtMs: Math.min(reading.capturedAtMs, heard), metrics: reading.metrics };
    channel.lastSample = sample;
    this.deps.events.emit('sample.taken', sample);
  }

  /**
   * Whether a channel reading may be handed on: a counter going backwards or rising faster than
   * the channel's largest flow is counted and not published; a new level that lasts
   * CHANNEL_BELIEVE_AFTER readings is a replaced device and believed (judgeChannelReading).
   */
  private plausible(channel: P1Channel, reading: NonNullable<MbusChannel['reading']>, labels: Record<string, string>): boolean {
    const metric = reading.metrics[0];
    if (!metric) return true;
    const next: ChannelValue = { capturedAtMs: reading.capturedAtMs, metric: metric.name, value: metric.value };
    const judgement = judgeChannelReading(channel.plausibility, next);
    channel.plausibility = judgement.state;
    if (!judgement.ok) {
      this.m.dropped.inc({ resource_id: channel.config.resource_id, reason: judgement.reason });
      this.deps.logger.warn({ ...labels, reason: judgement.reason, detail: judgement.detail }, 'implausible M-Bus channel reading dropped');
      channel.implausible = judgement.detail;
      return false;
    }
    if (judgement.believed !== undefined) this.deps.logger.warn({ ...labels, detail: judgement.believed }, 'M-Bus channel reading believed after refused ones');
    channel.implausible = null;
    return true;
  }

  private observe(meter: P1Meter, reason: string): void {
    meter.observed.drops[reason] = (meter.observed.drops[reason] ?? 0) + 1;
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
    for (const meter of this.meters) {
      this.sample(meter);
      for (const channel of meter.channels) this.sampleChannel(meter, channel);
      // A mode C meter is asked once per slot; its readout is published at the next.
      meter.modeC?.request();
    }
    // Every sample of this slot was handed on: the store may commit them together.
    this.deps.events.emit('poll.tick-done', { source: this.name });
  }

  /** One slot of one meter: the latest telegram if it is new since the last slot, else a miss. */
  private sample(meter: P1Meter): void {
    const labels = { resource_id: meter.config.resource_id, bus: meter.bus.name };
    this.m.polls.inc(labels);
    const latest = meter.latest;
    const wholeWithout = meter.wholeWithoutElectricityAtMs;
    if ((latest === null || latest === meter.published) && wholeWithout !== null && wholeWithout > (meter.lastAnsweredAtMs ?? Number.NEGATIVE_INFINITY)) {
      // A heat interface unit: it answers with whole telegrams, which carry no electricity.
      meter.misses = 0;
      meter.lastAnsweredAtMs = wholeWithout;
      if (meter.state !== 'online') this.deps.logger.warn({ ...labels, problem: this.problemOf(meter) }, 'P1 device sends whole telegrams without electricity');
      this.setState(meter, 'online');
      return;
    }
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
    // Before the sample: the site meter holds the telegram's demand when the sample makes the fuse controller look.
    const demand = latest.reading.demand;
    if (demand) {
      this.demands.set(meter.config.resource_id, { sampledAtMs: latest.receivedAtMs, demand });
      this.deps.events.emit('meter.demand', { resourceId: meter.config.resource_id, sampledAtMs: latest.receivedAtMs, demand });
    }
    this.deps.events.emit('sample.taken', sample);
  }

  private setState(meter: MeterBookkeeping, state: MeterState): void {
    setMeterState(meter, state, { online: this.m.online, events: this.deps.events, source: this.name, statuses: () => this.statuses() });
  }
}
