// Polls every configured meter on its bus, aligned to the wall clock, and hands sanity-checked
// samples to the event bus (sample.taken). A meter that stops answering goes offline after a few misses and is then
// re-probed at low priority, so it cannot starve the other meters on its bus: every slot while
// there is a sign it may answer (it answered part of a poll, garbled answers came back, or its
// port was missing and may reappear), otherwise on a backoff.
import { Counter, Histogram } from 'prom-client';
import type { MeterProfile } from '../config/types.js';
import type { MeterSample, MeterState, MeterStatus, Metric } from '../domain.js';
import type { BusScanView, ModuleViews } from '../ops/observability/views.js';
import type { LoopHandle } from '../ops/systemd/liveness.js';
import { acceptReading, freshBookkeeping, meterMetrics, meterStatus, setMeterState, type MeterBookkeeping, type MeterMetrics } from '../sources/meter-bookkeeping.js';
import { SlotTimer } from '../sources/slot-timer.js';
import type { MeterSource, MeterSourceDeps } from '../sources/source.js';
import { BusUnavailableError, ModbusBus, ModbusExceptionError, ModbusGarbledError, type BusResult } from './bus.js';
import { decodeValue } from './decode.js';
import { planReads, selectRegisters, type PlannedRead } from './planner.js';
import { resolveProfile } from './profiles/index.js';
import type { Reading } from './sanity.js';

interface MeterRuntime extends MeterBookkeeping {
  readonly profile: MeterProfile;
  readonly plan: PlannedRead[];
  readonly maxPowerW: number;
  inFlight: boolean;
  inFlightSinceMs: number;
  reprobeDelayMs: number;
  /** Tick from which an offline meter is probed again on its backoff. */
  nextProbeTick: number;
  /** Last tick with a sign that the meter may answer soon (see missCause). */
  lastSignTick: number;
}

/**
 * Why a poll or probe got no complete answer. `heard`: part of it was answered, answers came
 * back garbled, or the meter refused a request: it is there. `bus`: the port could not be used
 * (adapter unplugged, gateway down); it may come back at any moment. `silent`: no byte came back.
 */
type MissCause = 'heard' | 'bus' | 'silent';

export class MeterPoller implements MeterSource {
  readonly name = 'modbus';
  readonly views = { meters: () => this.statuses(), busScan: () => this.busScan() } satisfies ModuleViews;
  private readonly buses = new Map<string, ModbusBus>();
  private readonly meters: MeterRuntime[] = [];
  private slotTimer: SlotTimer | null = null;
  /** Ticks run so far; offline backoff is counted in ticks, so wall-clock steps cannot stretch it. */
  private tickCount = 0;
  private running = false;
  private readonly inFlight = new Set<Promise<void>>();
  private loop: LoopHandle | null = null;
  private readonly m: MeterMetrics & {
    latency: Histogram<'resource_id'>;
    requests: Counter<'bus' | 'outcome'>;
    reopens: Counter<'bus'>;
  };

  constructor(private readonly deps: MeterSourceDeps) {
    const registers = [deps.metrics];
    this.m = {
      // Shared with the P1 source (same names and labels): one series per meter whatever its source.
      ...meterMetrics(deps.metrics),
      latency: new Histogram({
        name: 'metergate_meter_poll_duration_seconds',
        help: 'Time to read all registers of a meter (queueing included)',
        labelNames: ['resource_id'],
        buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
        registers,
      }),
      requests: new Counter({ name: 'metergate_modbus_requests_total', help: 'Modbus request attempts on the line, by outcome', labelNames: ['bus', 'outcome'], registers }),
      reopens: new Counter({ name: 'metergate_modbus_port_reopens_total', help: 'Times a bus port was reopened after failing', labelNames: ['bus'], registers }),
    };
  }

  async start(): Promise<void> {
    const { config, logger } = this.deps;
    for (const bus of config.buses) {
      this.buses.set(
        bus.name,
        new ModbusBus({
          bus,
          logger,
          now: () => this.deps.clock.now(),
          onAttempt: (outcome) => this.m.requests.inc({ bus: bus.name, outcome }),
          onReopen: () => this.m.reopens.inc({ bus: bus.name }),
          // Every slot probes the offline meters of a bus whose port was missing; the port's
          // own reopen backoff must have expired by then, or a returned adapter waits a slot more.
          reopenMaxMs: Math.min(2_000, Math.floor(config.poll.interval_ms / 2)),
        }),
      );
    }
    for (const meter of config.meters) {
      const profile = resolveProfile(meter.profile, config.profiles);
      if (!profile) throw new Error(`meter ${meter.resource_id}: unknown profile ${meter.profile}`);
      // Every meter's failure series exists from the start at 0, so increase()/rate() and
      // alerts see the first failure (a series born at 1 hides it).
      this.m.failures.inc({ resource_id: meter.resource_id, bus: meter.bus }, 0);
      this.meters.push({
        ...freshBookkeeping(meter),
        profile,
        plan: planReads(selectRegisters(profile, meter.extra_metrics), profile),
        maxPowerW: meter.max_power_w ?? profile.max_power_w,
        inFlight: false,
        inFlightSinceMs: 0,
        reprobeDelayMs: config.poll.reprobe_initial_ms,
        nextProbeTick: 0,
        lastSignTick: Number.NEGATIVE_INFINITY,
      });
    }
    const used = new Set(config.meters.map((m) => m.bus));
    await Promise.all([...this.buses.values()].filter((b) => used.has(b.name)).map((b) => b.open()));
    this.running = true;
    this.loop = this.deps.liveness?.register('modbus-poll', this.stallLimitMs() + config.poll.interval_ms) ?? null;
    this.slotTimer = new SlotTimer(this.deps.clock, config.poll.interval_ms, () => this.tick());
    this.slotTimer.start();
    logger.info(
      { meters: this.meters.map((m) => ({ resource_id: m.config.resource_id, bus: m.config.bus, unit_id: m.config.unit_id, requests: m.plan.length })) },
      'modbus polling started',
    );
  }

  async stop(): Promise<void> {
    this.running = false;
    this.loop?.unregister();
    this.loop = null;
    this.slotTimer?.stop();
    this.slotTimer = null;
    await Promise.all([...this.buses.values()].map((b) => b.close()));
    await Promise.allSettled([...this.inFlight]);
  }

  statuses(): MeterStatus[] {
    return this.meters.map(meterStatus);
  }

  /** What answered on each configured bus (meters currently online), for the network_scan message. */
  busScan(): BusScanView[] {
    return this.deps.config.buses.map((bus) => {
      const online = this.meters.filter((m) => m.config.bus === bus.name && m.state === 'online').sort((a, b) => a.config.unit_id - b.config.unit_id);
      return {
        bus: bus.name,
        port: bus.type === 'rtu' ? (bus.port ?? '') : `${bus.host}:${bus.tcp_port}`,
        unit_ids: online.map((m) => m.config.unit_id),
        devices: online.map((m) => ({ unit_id: m.config.unit_id, profile: m.config.profile })),
      };
    });
  }

  /** A poll running longer than this is stuck (every request is bounded by timeout and backstop). */
  private stallLimitMs(): number {
    return Math.max(3 * this.deps.config.poll.interval_ms, 60_000);
  }

  private tick(): void {
    this.tickCount++;
    // Feed the watchdog only while the loop runs and no poll hangs; dead meters are not a stall.
    const now = performance.now();
    if (!this.meters.some((m) => m.inFlight && now - m.inFlightSinceMs > this.stallLimitMs())) this.loop?.tick();
    const polls: Promise<void>[] = [];
    for (const m of this.meters) {
      const offline = m.state === 'offline';
      if (offline && !this.probeDue(m)) continue;
      if (m.inFlight) {
        if (offline) this.deps.logger.debug({ resource_id: m.config.resource_id }, 'previous probe still running; skipping this tick');
        else this.deps.logger.warn({ resource_id: m.config.resource_id }, 'previous poll still running; skipping this tick');
        continue;
      }
      const p = this.poll(m, offline ? 'probe' : 'poll');
      this.track(p);
      polls.push(p);
    }
    // Every sample of the tick was handed on by now: the store commits them together.
    void Promise.allSettled(polls).then(() => this.deps.events.emit('poll.tick-done', { source: this.name }));
  }

  /**
   * An offline meter is probed every slot for as long as a poll would take to declare it offline
   * after the last sign that it may answer, otherwise when its backoff has run out.
   */
  private probeDue(m: MeterRuntime): boolean {
    return this.sawSignLately(m) || this.tickCount >= m.nextProbeTick;
  }

  private sawSignLately(m: MeterRuntime): boolean {
    return this.tickCount - m.lastSignTick <= this.deps.config.poll.offline_after_misses;
  }

  /** Ticks until the next backoff probe (a delay shorter than an interval is the next tick). */
  private backoffTicks(delayMs: number): number {
    return Math.max(1, Math.ceil(delayMs / this.deps.config.poll.interval_ms));
  }

  private track(p: Promise<void>): void {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  private async poll(m: MeterRuntime, kind: 'poll' | 'probe'): Promise<void> {
    const bus = this.buses.get(m.config.bus);
    if (!bus) return;
    m.inFlight = true;
    m.inFlightSinceMs = performance.now();
    const labels = { resource_id: m.config.resource_id, bus: m.config.bus };
    this.m.polls.inc(labels);
    const endTimer = this.m.latency.startTimer({ resource_id: m.config.resource_id });
    const results: Array<{ read: PlannedRead; res: BusResult }> = [];
    try {
      for (const read of m.plan) {
        // One request after another; a failure ends the poll so a dead meter costs one timeout.
        const res = await bus.read({
          unitId: m.config.unit_id,
          functionCode: read.functionCode,
          address: read.address,
          count: read.count,
          priority: kind,
        });
        results.push({ read, res });
      }
    } catch (err) {
      endTimer();
      m.inFlight = false;
      if (!this.running) return;
      this.m.failures.inc(labels);
      this.miss(m, err as Error, kind, results.length > 0);
      return;
    }
    endTimer();
    m.inFlight = false;
    if (!this.running) return;
    this.answered(m, results);
  }

  private answered(m: MeterRuntime, results: Array<{ read: PlannedRead; res: BusResult }>): void {
    const wasState = m.state;
    m.misses = 0;
    m.reprobeDelayMs = this.deps.config.poll.reprobe_initial_ms;
    const sampledAtMs = results[0].res.answeredAtMs;
    m.lastAnsweredAtMs = results[results.length - 1].res.answeredAtMs;
    this.setState(m, 'online');
    if (wasState === 'offline') this.deps.logger.info({ resource_id: m.config.resource_id, unit_id: m.config.unit_id }, 'meter answers again');

    const values: Record<string, number> = {};
    const units: Record<string, string> = {};
    for (const { read, res } of results) {
      for (const { spec, offset } of read.values) {
        const v = decodeValue(res.words, offset, spec);
        if (v === null) continue; // the meter's "no value" sentinel
        values[spec.metric] = v;
        units[spec.metric] = spec.unit;
      }
    }
    const reading: Reading = { sampledAtMs, values };
    if (!acceptReading(m, reading, m.maxPowerW, { dropped: this.m.dropped, logger: this.deps.logger, logFields: { resource_id: m.config.resource_id } })) return;
    const metrics: Metric[] = m.profile.registers
      .filter((r) => values[r.metric] !== undefined && r.metric in units)
      .filter((r, i, all) => all.findIndex((x) => x.metric === r.metric) === i)
      .map((r) => ({ name: r.metric, value: roundValue(values[r.metric]), unit: units[r.metric] }));
    const sample: MeterSample = { resourceId: m.config.resource_id, sampledAtMs, metrics };
    m.lastSample = sample;
    this.deps.logger.debug({ resource_id: m.config.resource_id, sampled_at: new Date(sampledAtMs).toISOString(), metrics: metrics.length }, 'sample');
    this.deps.events.emit('sample.taken', sample);
  }

  private miss(m: MeterRuntime, err: Error, kind: 'poll' | 'probe', partlyAnswered: boolean): void {
    m.misses++;
    const cause = missCause(err, partlyAnswered);
    const { reprobe_initial_ms, reprobe_max_ms } = this.deps.config.poll;
    if (cause !== 'silent') {
      m.lastSignTick = this.tickCount;
      m.reprobeDelayMs = reprobe_initial_ms;
    }
    const log = { resource_id: m.config.resource_id, bus: m.config.bus, unit_id: m.config.unit_id, misses: m.misses, cause, err: err.message };
    if (kind === 'probe') {
      // Backoff grows only for a meter that stays silent on a working line.
      if (!this.sawSignLately(m)) m.reprobeDelayMs = Math.min(m.reprobeDelayMs * 2, reprobe_max_ms);
      m.nextProbeTick = this.tickCount + this.backoffTicks(m.reprobeDelayMs);
      this.deps.logger.debug(log, 'offline meter still not answering');
      return;
    }
    if (err instanceof ModbusExceptionError && (err.code === 10 || err.code === 11)) this.deps.logger.info(log, 'gateway: meter behind it did not answer');
    else if (err instanceof ModbusExceptionError) this.deps.logger.warn(log, 'meter refused the request (check profile and unit id)');
    else if (err instanceof BusUnavailableError) this.deps.logger.warn(log, 'bus unavailable');
    else this.deps.logger.info(log, 'meter did not answer');
    if (m.misses >= this.deps.config.poll.offline_after_misses && m.state !== 'offline') {
      m.nextProbeTick = this.tickCount + this.backoffTicks(m.reprobeDelayMs);
      this.setState(m, 'offline');
      this.deps.logger.warn({ ...log, reprobe_every_slot: this.sawSignLately(m), reprobe_in_ms: m.reprobeDelayMs }, 'meter offline');
    }
  }

  private setState(m: MeterRuntime, state: MeterState): void {
    setMeterState(m, state, { online: this.m.online, events: this.deps.events, source: this.name, statuses: () => this.statuses() });
  }
}

function missCause(err: Error, partlyAnswered: boolean): MissCause {
  if (partlyAnswered || err instanceof ModbusGarbledError) return 'heard';
  if (err instanceof BusUnavailableError) return 'bus';
  // Exceptions 10/11 come from a gateway whose meter behind it did not answer.
  if (err instanceof ModbusExceptionError) return err.code === 10 || err.code === 11 ? 'silent' : 'heard';
  return 'silent';
}

/** Float32 registers carry ~7 significant digits; do not publish binary noise beyond that. */
function roundValue(v: number): number {
  if (v === 0 || !Number.isFinite(v)) return v;
  const digits = Math.max(0, 7 - Math.ceil(Math.log10(Math.abs(v))));
  return Number(v.toFixed(Math.min(digits, 6)));
}
