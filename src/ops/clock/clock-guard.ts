// The clock seam every sample passes: holds samples while the clock is untrusted, flags steps.
import { Counter, Gauge, type Registry } from 'prom-client';
import { uptime } from 'node:os';
import type { Clock } from '../../clock.js';
import type { Config } from '../../config/types.js';
import type { EventBus } from '../../events.js';
import type { MeterSample } from '../../domain.js';
import type { Module } from '../../lifecycle.js';
import type { Logger } from '../../log.js';
import { ClockStepStore, suspectWindow, type ClockStep } from '../../store/clock-steps.js';
import type { Db } from '../../store/db.js';
import { BUILD_DATE_MS } from '../../version.js';
import { ClockTrust, DEFAULT_CLOCK_POLICY, isPlausibleTime, type ClockTrustPolicy, type NtpStatus } from './clock-trust.js';
import { monotonicNowMs } from '../systemd/liveness.js';
import { readNtpStatus } from './ntp-status.js';
import type { ClockView, ModuleViews } from '../observability/views.js';

export interface ClockGuardDeps {
  readonly config: Config;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly metrics: Registry;
  /** Gets sample.released for every sample let through, clock.trusted when trust arrives. */
  readonly events: EventBus;
  readonly monotonicMs?: () => number;
  readonly ntpStatus?: () => Promise<NtpStatus>;
  /** How long the system has been up (default: the kernel's, os.uptime()). */
  readonly uptimeMs?: () => number;
  readonly buildDateMs?: number;
  /** Where steps beyond clock.step_tolerance_s are recorded and readings flagged (none: only logged). */
  readonly db?: Db;
}

/** How long /healthz reports the clock degraded after a step beyond the tolerance. */
const STEP_VISIBLE_MS = 24 * 3_600_000;

/** How often the clocks are looked at while the clock is not trusted, and after. */
const UNTRUSTED_CHECK_MS = 5_000;
const TRUSTED_CHECK_MS = 30_000;
/**
 * While not trusted, the log says again why nothing is published (no silent wait): after a
 * minute, then twice as long each time up to an hour (a site offline for days does not
 * fill the journal).
 */
const UNTRUSTED_REMINDER_FIRST_MS = 60_000;
const UNTRUSTED_REMINDER_MAX_MS = 3_600_000;

export function clockPolicy(config: Config, buildDateMs = BUILD_DATE_MS): ClockTrustPolicy {
  const c = config.clock as Config["clock"] | undefined;
  return {
    ...DEFAULT_CLOCK_POLICY,
    buildDateMs,
    mode: c?.trust ?? DEFAULT_CLOCK_POLICY.mode,
    stableForMs: c ? c.stable_for_s * 1000 : DEFAULT_CLOCK_POLICY.stableForMs,
    maxHeld: c?.max_held_samples ?? DEFAULT_CLOCK_POLICY.maxHeld,
    maxFutureMs: c ? c.max_future_days * 86_400_000 : DEFAULT_CLOCK_POLICY.maxFutureMs,
  };
}

/**
 * The gate between the meter poller and everything that stores or publishes a sample
 * (see clock-trust.ts and docs/clock-safety.md for the rule). Samples go in through
 * submit() (the daemon wires sample.taken to it); they come out as sample.released,
 * immediately while the clock is trusted, or re-stamped when trust arrives. Message builders ask trustedNow() for timestamps of
 * their own (heartbeats, scans) and send nothing while it is null.
 */
export class ClockGuard implements Module {
  readonly name = 'clock-guard';
  readonly views: ModuleViews = { clock: () => this.view() };
  private readonly trust: ClockTrust<MeterSample>;
  private readonly monotonicMs: () => number;
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | null = null;
  private readonly gauges: { trusted: Gauge; held: Gauge; dropped: Counter; steps: Counter; stepsBeyond: Counter };
  private steps: ClockStepStore | null = null;
  private lastStep: ClockStep | null = null;
  private lastObservedWallMs: number | null = null;
  private lastReminderMonoMs = 0;
  private reminderEveryMs = UNTRUSTED_REMINDER_FIRST_MS;

  constructor(private readonly deps: ClockGuardDeps) {
    this.trust = new ClockTrust<MeterSample>(clockPolicy(deps.config, deps.buildDateMs));
    this.monotonicMs = deps.monotonicMs ?? monotonicNowMs;
    const registers = [deps.metrics];
    this.gauges = {
      trusted: new Gauge({ name: 'metergate_clock_trusted', help: '1 when the system clock is trusted for timestamps (docs/clock-safety.md)', registers }),
      held: new Gauge({ name: 'metergate_clock_held_samples', help: 'Samples held until the clock is trusted', registers }),
      dropped: new Counter({ name: 'metergate_clock_dropped_samples_total', help: 'Samples dropped because they could not be stamped with a trusted time', registers }),
      steps: new Counter({ name: 'metergate_clock_steps_total', help: 'Steps of the wall clock against the monotonic clock', registers }),
      stepsBeyond: new Counter({
        name: 'metergate_clock_steps_beyond_tolerance_total',
        help: 'Steps of the trusted clock larger than clock.step_tolerance_s: the readings around each are flagged clock_suspect',
        registers,
      }),
    };
    const self = this;
    new Gauge({
      name: 'metergate_readings_clock_suspect',
      help: 'Stored readings flagged clock_suspect (sampled inside the window of a clock step beyond the tolerance; session pricing refuses them)',
      registers,
      collect() {
        this.set(self.steps?.flaggedCount() ?? 0);
      },
    });
  }

  get isTrusted(): boolean {
    return this.trust.isTrusted;
  }

  get reason(): string {
    return this.trust.why;
  }

  get heldCount(): number {
    return this.trust.heldCount;
  }

  /** For /healthz, /metrics and the status page. */
  view(): ClockView {
    const now = this.deps.clock.now();
    const step = this.lastStep;
    const stepWarning =
      step && Math.abs(now - step.detectedAtMs) < STEP_VISIBLE_MS
        ? `the trusted clock stepped ${step.stepMs > 0 ? 'forward' : 'back'} by ${Math.round(Math.abs(step.stepMs) / 1000)} s at ${new Date(step.detectedAtMs).toISOString()}; ${this.steps?.flaggedCount() ?? 0} reading(s) flagged clock_suspect (sampled ${new Date(step.suspectFromMs).toISOString()} .. ${new Date(step.suspectToMs).toISOString()} are not priced); messages stamped ahead of the clock are quarantined`
        : null;
    return { trusted: this.trust.isTrusted, plausible: isPlausibleTime(now, this.trust.policy), reason: this.trust.why, heldSamples: this.trust.heldCount, fix: this.trust.fix, stepWarning };
  }

  /** The current time if it may go into a message, else null. */
  trustedNow(): number | null {
    const now = this.deps.clock.now();
    return this.trust.isTrusted && isPlausibleTime(now, this.trust.policy) ? now : null;
  }

  /** The trusted wall time of an earlier monotonic instant (e.g. process start for booted_at). */
  wallTimeOf(monoMs: number): number | null {
    return this.trust.wallTimeOf(monoMs);
  }

  async start(): Promise<void> {
    if (this.deps.db) {
      this.steps = new ClockStepStore(this.deps.db);
      this.lastStep = this.steps.latest();
    }
    await this.check();
    // Said at start and again every minute of the wait, with what ends it: otherwise an
    // installer watching the journal sees polls but nothing in the cloud and no reason why.
    if (!this.trust.isTrusted) this.remind();
    this.schedule();
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.checking;
    if (this.trust.heldCount > 0) {
      this.deps.logger.warn({ held: this.trust.heldCount }, 'stopping with samples still waiting for a trusted clock: they are lost');
    }
  }

  private schedule(): void {
    this.timer = setTimeout(
      () => {
        void this.check().finally(() => {
          if (this.timer) this.schedule();
        });
      },
      this.trust.isTrusted ? TRUSTED_CHECK_MS : UNTRUSTED_CHECK_MS,
    );
    this.timer.unref();
  }

  /** Looks at the clocks once (exposed for tests and for doctor). */
  check(): Promise<void> {
    this.checking ??= this.checkOnce().finally(() => {
      this.checking = null;
    });
    return this.checking;
  }

  private async checkOnce(): Promise<void> {
    // NTP status is only needed to grant trust; once trusted we only watch for steps.
    const ntp = this.trust.isTrusted ? 'unknown' : await (this.deps.ntpStatus ?? readNtpStatus)();
    const obs = { wallMs: this.deps.clock.now(), monoMs: this.monotonicMs(), ntp, uptimeMs: (this.deps.uptimeMs ?? (() => uptime() * 1000))() };
    const wasTrusted = this.trust.isTrusted;
    const previousWallMs = this.lastObservedWallMs;
    this.lastObservedWallMs = obs.wallMs;
    for (const event of this.trust.observe(obs)) {
      if (event.kind === 'step') {
        this.gauges.steps.inc();
        this.deps.logger.warn({ stepMs: event.stepMs }, 'wall clock stepped');
        if (wasTrusted && previousWallMs !== null) this.stepWhileTrusted(previousWallMs, obs.wallMs, event.stepMs);
      } else if (event.kind === 'untrusted') {
        this.deps.logger.error({ reason: event.reason }, 'clock no longer trusted: holding samples');
      } else {
        this.deps.logger.info({ reason: event.reason, released: event.released.length, dropped: event.dropped }, 'clock trusted');
        if (event.dropped > 0) this.gauges.dropped.inc(event.dropped);
        for (const r of event.released) this.deliver({ ...r.item, sampledAtMs: r.sampledAtMs });
        this.deps.events.emit('clock.trusted', { reason: event.reason });
      }
    }
    if (!this.trust.isTrusted && obs.monoMs - this.lastReminderMonoMs >= this.reminderEveryMs) {
      this.remind();
      this.reminderEveryMs = Math.min(2 * this.reminderEveryMs, UNTRUSTED_REMINDER_MAX_MS);
    }
    if (this.trust.isTrusted) this.reminderEveryMs = UNTRUSTED_REMINDER_FIRST_MS;
    this.updateGauges();
  }

  /** The log line of the wait: why nothing is published, how much is held, and what ends it. */
  private remind(): void {
    this.lastReminderMonoMs = this.monotonicMs();
    const fix = this.trust.fix;
    this.deps.logger.warn(
      { reason: this.trust.why, held: this.trust.heldCount, fix },
      `clock not trusted yet: nothing is published until it is (readings are kept and sent then): ${this.trust.why}${fix ? `. To end it: ${fix}` : ''} (docs/clock-safety.md)`,
    );
  }

  /**
   * A trusted clock moved by more than clock.step_tolerance_s: which readings carry which
   * offset cannot be known, so the ones inside the step's window are flagged (kept; pricing
   * refuses them) and stored messages stamped ahead of the clock are quarantined by the
   * publisher's gate. Nothing is deleted.
   */
  private stepWhileTrusted(previousWallMs: number, wallMs: number, stepMs: number): void {
    const toleranceMs = (this.deps.config.clock?.step_tolerance_s ?? 60) * 1000;
    if (Math.abs(stepMs) <= toleranceMs) return;
    const window = suspectWindow(previousWallMs, wallMs, stepMs);
    const step: ClockStep = { detectedAtMs: wallMs, stepMs, suspectFromMs: window.fromMs, suspectToMs: window.toMs };
    this.gauges.stepsBeyond.inc();
    this.lastStep = step;
    let flagged = 0;
    try {
      flagged = this.steps?.record(step) ?? 0;
    } catch (err) {
      this.deps.logger.error({ err }, 'could not record the clock step and flag the readings around it');
    }
    this.deps.logger.error(
      { stepMs, toleranceMs, suspectFrom: new Date(window.fromMs).toISOString(), suspectTo: new Date(window.toMs).toISOString(), flagged },
      'trusted clock stepped beyond clock.step_tolerance_s: readings sampled in the window are flagged clock_suspect (kept, not priced); messages stamped ahead of the clock are quarantined (docs/clock-safety.md)',
    );
  }

  /** The seam: every sample from the poller passes here before it is stored or published. */
  submit(sample: MeterSample): void {
    const wallNow = this.deps.clock.now();
    const monoMs = this.monotonicMs() - (wallNow - sample.sampledAtMs);
    const wasTrusted = this.trust.isTrusted;
    const result = this.trust.accept(sample, sample.sampledAtMs, monoMs);
    if (result.action === 'pass') this.deliver(sample);
    else {
      if (wasTrusted) this.deps.logger.error({ sampledAt: sample.sampledAtMs }, 'sample with an implausible timestamp: clock no longer trusted, holding');
      if (result.evicted > 0) {
        this.gauges.dropped.inc(result.evicted);
        this.deps.logger.warn({ evicted: result.evicted, held: this.trust.heldCount }, 'too many samples waiting for a trusted clock: dropped the oldest');
      }
    }
    this.updateGauges();
  }

  private deliver(sample: MeterSample): void {
    this.deps.events.emit('sample.released', sample);
  }

  private updateGauges(): void {
    this.gauges.trusted.set(this.trust.isTrusted ? 1 : 0);
    this.gauges.held.set(this.trust.heldCount);
  }
}
