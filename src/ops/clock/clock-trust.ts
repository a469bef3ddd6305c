// When the wall clock may be trusted (pure rule, docs/clock-safety.md).
/**
 * Clock safety for gateways without a real-time clock (pure logic, no I/O).
 *
 * A Raspberry Pi boots with the time it had at its last shutdown (fake-hwclock) or with
 * 1970, and only learns the real time once NTP answers. Readings stamped before that are
 * wrong, and a wrong timestamp is worse than a missing reading. The rule (docs/clock-safety.md):
 *
 * - A wall time is *plausible* when it lies in [build date, build date + maxFuture].
 *   No message may carry an implausible timestamp, trusted clock or not.
 * - The clock becomes *trusted* when the wall time is plausible and
 *     mode 'ntp':    the kernel reports the clock NTP-synchronized;
 *     mode 'auto':   as 'ntp'; where synchronization cannot be determined at all (no
 *                    timedatectl/timesyncd), when the offset between the wall clock and the
 *                    monotonic clock has not moved by more than maxStepMs for stableForMs,
 *                    counted from the system's boot unless a step was seen since (a box up
 *                    longer than that is past the early minutes in which an NTP client
 *                    steps a clock; docs/clock-safety.md says why it is not trusted sooner);
 *     mode 'system': at once (gateways with a battery-backed RTC and no NTP).
 *   Once trusted it stays trusted, also when NTP later loses its servers (the clock then
 *   drifts by parts per million, not by years), unless the wall time becomes implausible.
 * - Samples taken while the clock is not trusted are *held* in memory together with the
 *   monotonic time they were taken at. When trust arrives, each is re-stamped:
 *   sampledAt = its monotonic time + (wall - monotonic) at the moment of trust. The
 *   monotonic clock never steps, so this is exact up to NTP's own slewing. A re-stamped
 *   time that is implausible or in the future is dropped; so is the oldest held sample
 *   when more than maxHeld are waiting. Nothing held survives a restart (the monotonic
 *   clock of one process means nothing to the next), so those samples are lost, counted.
 */
export type ClockTrustMode = 'auto' | 'ntp' | 'system';
export type NtpStatus = 'synchronized' | 'unsynchronized' | 'unknown';

export interface ClockTrustPolicy {
  readonly mode: ClockTrustMode;
  readonly buildDateMs: number;
  /** Wall times later than buildDateMs + maxFutureMs are implausible. */
  readonly maxFutureMs: number;
  /** 'auto' without NTP information: how long the wall/monotonic offset must stay put. */
  readonly stableForMs: number;
  /** A change of the wall/monotonic offset larger than this is a clock step. */
  readonly maxStepMs: number;
  /** Held samples kept at most; the oldest go first. */
  readonly maxHeld: number;
}

const DAY_MS = 86_400_000;

/** What ends the wait of a clock outside the plausible range. */
const IMPLAUSIBLE_FIX = 'set the right time: NTP (`sudo timedatectl set-ntp true`, outbound UDP 123) or `sudo date -s ...`; a battery-backed RTC that lost its time needs a new battery';

export const DEFAULT_CLOCK_POLICY: Omit<ClockTrustPolicy, 'buildDateMs'> = {
  mode: 'auto',
  maxFutureMs: 15 * 366 * DAY_MS,
  stableForMs: 5 * 60_000,
  maxStepMs: 2_000,
  maxHeld: 20_000,
};

/** One look at the clocks: wall time, monotonic time, and what the OS says about NTP. */
export interface ClockObservation {
  readonly wallMs: number;
  readonly monoMs: number;
  readonly ntp: NtpStatus;
  /** How long the system has been up (boot to now), when known. */
  readonly uptimeMs?: number;
}

export function isPlausibleTime(wallMs: number, policy: Pick<ClockTrustPolicy, 'buildDateMs' | 'maxFutureMs'>): boolean {
  return Number.isFinite(wallMs) && wallMs >= policy.buildDateMs && wallMs <= policy.buildDateMs + policy.maxFutureMs;
}

export interface Held<T> {
  readonly item: T;
  readonly monoMs: number;
}

export interface Restamped<T> {
  readonly item: T;
  readonly sampledAtMs: number;
}

export type TrustEvent<T> =
  | { readonly kind: 'trusted'; readonly reason: string; readonly released: readonly Restamped<T>[]; readonly dropped: number }
  | { readonly kind: 'untrusted'; readonly reason: string }
  | { readonly kind: 'step'; readonly stepMs: number };

export type AcceptResult = { readonly action: 'pass'; readonly sampledAtMs: number } | { readonly action: 'hold'; readonly evicted: number };

/**
 * The trust state and the held samples. Feed it observations (observe) and samples
 * (accept); it says what to publish. Time comes in only through its arguments.
 */
export class ClockTrust<T> {
  private trusted = false;
  private reason = 'not yet observed';
  private offsetMs: number | null = null;
  private stableSinceMono: number | null = null;
  private held: Held<T>[] = [];
  private droppedTotal = 0;
  private stepSeen = false;
  private remedy: string | null = null;
  private expectedAtMs: number | null = null;

  constructor(readonly policy: ClockTrustPolicy) {}

  get isTrusted(): boolean {
    return this.trusted;
  }

  get why(): string {
    return this.reason;
  }

  /** While not trusted: the setting or action that ends the wait (null once trusted). */
  get fix(): string | null {
    return this.trusted ? null : this.remedy;
  }

  /** While not trusted and the wait ends by itself: the wall time it will (auto mode without NTP information). */
  get trustExpectedAtMs(): number | null {
    return this.trusted ? null : this.expectedAtMs;
  }

  get heldCount(): number {
    return this.held.length;
  }

  /** Samples dropped so far (evicted while held, or not re-stampable). */
  get dropped(): number {
    return this.droppedTotal;
  }

  /** The trusted wall time of a monotonic instant, or null while the clock is not trusted. */
  wallTimeOf(monoMs: number): number | null {
    if (!this.trusted || this.offsetMs === null) return null;
    return monoMs + this.offsetMs;
  }

  /** Updates the trust state from one observation; returns what changed. */
  observe(obs: ClockObservation): TrustEvent<T>[] {
    const events: TrustEvent<T>[] = [];
    const offset = obs.wallMs - obs.monoMs;
    const previousOffset = this.offsetMs;
    this.offsetMs = offset;
    if (previousOffset !== null && Math.abs(offset - previousOffset) > this.policy.maxStepMs) {
      events.push({ kind: 'step', stepMs: offset - previousOffset });
      this.stableSinceMono = obs.monoMs;
      this.stepSeen = true;
    }
    if (this.stableSinceMono === null) this.stableSinceMono = obs.monoMs;
    const plausible = isPlausibleTime(obs.wallMs, this.policy);

    if (this.trusted) {
      if (!plausible) {
        this.trusted = false;
        this.reason = `wall clock ${new Date(obs.wallMs).toISOString()} is outside the plausible range`;
        this.remedy = IMPLAUSIBLE_FIX;
        events.push({ kind: 'untrusted', reason: this.reason });
      }
      return events;
    }

    const grant = this.grantReason(obs, plausible);
    if (grant === null) return events;
    this.trusted = true;
    this.reason = grant;
    const released: Restamped<T>[] = [];
    let dropped = 0;
    for (const h of this.held) {
      const sampledAtMs = h.monoMs + offset;
      if (isPlausibleTime(sampledAtMs, this.policy) && sampledAtMs <= obs.wallMs) released.push({ item: h.item, sampledAtMs });
      else dropped += 1;
    }
    this.held = [];
    this.droppedTotal += dropped;
    events.push({ kind: 'trusted', reason: grant, released, dropped });
    return events;
  }

  private grantReason(obs: ClockObservation, plausible: boolean): string | null {
    const { mode } = this.policy;
    this.expectedAtMs = null;
    if (!plausible) {
      this.reason = `wall clock ${new Date(obs.wallMs).toISOString()} is before the build date or implausibly far ahead; waiting for NTP`;
      this.remedy = IMPLAUSIBLE_FIX;
      return null;
    }
    if (mode === 'system') return 'clock.trust is "system": the system clock is trusted as soon as it is plausible';
    if (obs.ntp === 'synchronized') return 'the system clock is NTP-synchronized';
    const rightAnyway = 'or, if this machine\'s clock is right without NTP (a battery-backed RTC, a VM or container on a synchronized host), set `clock.trust: system` and restart';
    if (mode === 'ntp' || obs.ntp === 'unsynchronized') {
      this.reason = obs.ntp === 'unknown' ? 'NTP synchronization cannot be determined (clock.trust is "ntp")' : 'waiting for NTP synchronization';
      this.remedy =
        obs.ntp === 'unknown'
          ? `install systemd-timesyncd or chrony (so NTP synchronization can be read), or set \`clock.trust: auto\`; ${rightAnyway}`
          : `let NTP synchronize: \`sudo timedatectl set-ntp true\`, allow outbound UDP 123 (\`timedatectl timesync-status\` shows progress); ${rightAnyway}`;
      return null;
    }
    // auto, NTP status unknown: stable since boot, or since the last step seen.
    const sinceStart = obs.monoMs - (this.stableSinceMono ?? obs.monoMs);
    const stableMs = this.stepSeen || obs.uptimeMs === undefined ? sinceStart : Math.max(sinceStart, obs.uptimeMs);
    if (stableMs >= this.policy.stableForMs) {
      return stableMs > sinceStart
        ? `NTP status unknown; the system has been up ${Math.round(stableMs / 1000)} s (clock.stable_for_s ${Math.round(this.policy.stableForMs / 1000)}) and the clock has not stepped since the gateway started`
        : `NTP status unknown; the clock has run without steps for ${Math.round(stableMs / 1000)} s`;
    }
    this.expectedAtMs = obs.wallMs + (this.policy.stableForMs - stableMs);
    this.reason = `NTP status unknown; trusting the clock once it has run ${Math.round(this.policy.stableForMs / 1000)} s without steps${this.stepSeen ? ' since its last step' : ' since boot'} (at ${new Date(this.expectedAtMs).toISOString()})`;
    this.remedy = `it ends by itself then (\`clock.stable_for_s\`); sooner: install systemd-timesyncd or chrony (so NTP synchronization can be read), ${rightAnyway}`;
    return null;
  }

  /**
   * A sample read at wall time `wallMs` (as stamped by the poller) and monotonic `monoMs`.
   * Trusted and plausible: pass with its own timestamp. Otherwise: hold it.
   */
  accept(item: T, wallMs: number, monoMs: number): AcceptResult {
    if (this.trusted) {
      if (isPlausibleTime(wallMs, this.policy)) return { action: 'pass', sampledAtMs: wallMs };
      // The clock left the plausible range between two observations: stop trusting now.
      this.trusted = false;
      this.reason = `wall clock ${new Date(wallMs).toISOString()} is outside the plausible range`;
      this.remedy = IMPLAUSIBLE_FIX;
    }
    this.held.push({ item, monoMs });
    let evicted = 0;
    while (this.held.length > this.policy.maxHeld) {
      this.held.shift();
      evicted += 1;
    }
    this.droppedTotal += evicted;
    return { action: 'hold', evicted };
  }
}
