// doctor: whether the daemon would trust the system clock now, by the daemon's own rule
// (clock-trust.ts): a clock it would not trust means nothing is published, so that is a
// FAIL naming why and what ends it (e.g. `clock.trust: system`), never "All checks passed".
import { uptime } from 'node:os';
import { BUILD_DATE_MS } from '../../version.js';
import { clockPolicy } from '../clock/clock-guard.js';
import { ClockTrust, DEFAULT_CLOCK_POLICY, type NtpStatus } from '../clock/clock-trust.js';
import { readNtpStatus } from '../clock/ntp-status.js';
import { fail, pass, warn, type DoctorCheck } from './types.js';

export function clockCheckWith(ntpStatus: () => Promise<NtpStatus>, uptimeMs: () => number = () => uptime() * 1000): DoctorCheck {
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
      if (!trust.isTrusted) {
        const held = trust.why.startsWith('wall clock') ? `${iso} ${trust.why.replace(/^wall clock \S+ /, '')}` : `${iso}, ${trust.why}`;
        return [fail('clock', `${held}: the daemon holds every reading and publishes nothing until it trusts the clock`, trust.fix ?? 'see docs/clock-safety.md')];
      }
      if (policy.mode === 'system') return [pass('clock', `${iso}, trusted as set (clock.trust: system)`)];
      if (ntp === 'synchronized') return [pass('clock', `${iso}, NTP-synchronized`)];
      // Trusted without NTP information (auto, up past clock.stable_for_s): published, but nothing confirms the time.
      return [warn('clock', `${iso}, trusted without NTP information (${trust.why})`, 'install systemd-timesyncd or chrony so NTP synchronization can be read; or, if this clock is right without NTP (RTC, VM host), set `clock.trust: system`')];
    },
  };
}

export const clockCheck = clockCheckWith(() => readNtpStatus());
