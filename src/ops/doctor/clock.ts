// doctor: whether the daemon trusts the system clock, by the daemon's own rule
// (clock-trust.ts): a clock it does not trust means nothing is published, so that is a
// FAIL naming why and what ends it (e.g. `clock.trust: system`), never "All checks passed".
// A running daemon is asked first (its /status.json): it may trust a clock a new start
// would not (trust, once granted, stays when NTP loses its servers), or hold readings now.
import { uptime } from 'node:os';
import type { Config } from '../../config/types.js';
import { BUILD_DATE_MS } from '../../version.js';
import { clockPolicy } from '../clock/clock-guard.js';
import { ClockTrust, DEFAULT_CLOCK_POLICY, type NtpStatus } from '../clock/clock-trust.js';
import { readNtpStatus } from '../clock/ntp-status.js';
import { fetchDaemonStatus } from './meters.js';
import { fail, pass, warn, type DoctorCheck } from './types.js';

/** The clock as the running daemon reports it (/status.json `clock`), or null when no daemon answers. */
export interface DaemonClock {
  readonly trusted: boolean;
  readonly reason: string;
  readonly held_samples: number;
  readonly fix?: string | null;
}

async function runningDaemonClock(config: Config | null, timeoutMs: number): Promise<DaemonClock | null> {
  if (!config) return null;
  const status = (await fetchDaemonStatus(config, timeoutMs)) as { clock?: DaemonClock | null } | null;
  return status?.clock && typeof status.clock.trusted === 'boolean' ? status.clock : null;
}

export function clockCheckWith(
  ntpStatus: () => Promise<NtpStatus>,
  uptimeMs: () => number = () => uptime() * 1000,
  daemonClock: (config: Config | null, timeoutMs: number) => Promise<DaemonClock | null> = runningDaemonClock,
): DoctorCheck {
  return {
    name: 'clock',
    needsConfig: false,
    async run(env) {
      const now = env.now();
      const iso = new Date(now).toISOString();
      const policy = env.config ? clockPolicy(env.config) : { ...DEFAULT_CLOCK_POLICY, buildDateMs: BUILD_DATE_MS };
      // NTP is asked only where the rule needs it (clock.trust: system does not).
      const ntp = policy.mode === 'system' ? 'unknown' : await ntpStatus();
      const trust = new ClockTrust<never>(policy);
      trust.observe({ wallMs: now, monoMs: 0, ntp, uptimeMs: uptimeMs() });
      const running = await daemonClock(env.config, env.timeoutMs);
      if (running && !running.trusted) {
        return [fail('clock', `${iso}: the running daemon does not trust the clock (${running.reason}); it holds ${running.held_samples} reading(s) and publishes nothing until it does`, running.fix ?? trust.fix ?? 'see docs/clock-safety.md')];
      }
      if (!trust.isTrusted) {
        const why = trust.why.startsWith('wall clock') ? `${iso} ${trust.why.replace(/^wall clock \S+ /, '')}` : `${iso}, ${trust.why}`;
        if (running) return [warn('clock', `${why}: the running daemon trusts the clock (trust granted earlier stays), but a restart would hold every reading until it trusts it again`, trust.fix ?? 'see docs/clock-safety.md')];
        return [fail('clock', `${why}: the daemon holds every reading and publishes nothing until it trusts the clock`, trust.fix ?? 'see docs/clock-safety.md')];
      }
      if (policy.mode === 'system') return [pass('clock', `${iso}, trusted as set (clock.trust: system)`)];
      if (ntp === 'synchronized') return [pass('clock', `${iso}, NTP-synchronized`)];
      // Trusted without NTP information (auto, up past clock.stable_for_s): published, but nothing confirms the time.
      return [warn('clock', `${iso}, trusted without NTP information (${trust.why})`, 'install systemd-timesyncd or chrony so NTP synchronization can be read; or, if this clock is right without NTP (RTC, VM host), set `clock.trust: system`')];
    },
  };
}

export const clockCheck = clockCheckWith(() => readNtpStatus());
