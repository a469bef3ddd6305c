// doctor: the system clock is synchronized and plausible.
import { BUILD_DATE_MS } from '../../version.js';
import { clockPolicy } from '../clock/clock-guard.js';
import { isPlausibleTime, type NtpStatus } from '../clock/clock-trust.js';
import { readNtpStatus } from '../clock/ntp-status.js';
import { fail, pass, warn, type DoctorCheck } from './types.js';

const NTP_FIX = 'sudo timedatectl set-ntp true; allow outbound UDP 123, or set a reachable server (NTP= in /etc/systemd/timesyncd.conf); `timedatectl timesync-status` shows progress';

export function clockCheckWith(ntpStatus: () => Promise<NtpStatus>): DoctorCheck {
  return {
    name: 'clock',
    needsConfig: false,
    async run(env) {
      const now = env.now();
      const iso = new Date(now).toISOString();
      const policy = env.config ? clockPolicy(env.config) : { buildDateMs: BUILD_DATE_MS, maxFutureMs: 15 * 366 * 86_400_000, mode: 'auto' as const };
      if (!isPlausibleTime(now, policy)) {
        return [fail('clock', `${iso} is before this software's build date (${new Date(BUILD_DATE_MS).toISOString().slice(0, 10)}) or implausibly far ahead; readings are held until it is right`, NTP_FIX)];
      }
      if (policy.mode === 'system') return [pass('clock', `${iso}, trusted as set (clock.trust: system)`)];
      const ntp = await ntpStatus();
      if (ntp === 'synchronized') return [pass('clock', `${iso}, NTP-synchronized`)];
      if (ntp === 'unknown') {
        return [
          policy.mode === 'ntp'
            ? fail('clock', `${iso}, NTP synchronization cannot be determined (no timedatectl/timesyncd) and clock.trust is "ntp": readings are held`, 'install systemd-timesyncd or chrony, or set clock.trust: auto')
            : warn('clock', `${iso}, NTP synchronization cannot be determined; the daemon trusts the clock after it ran ${env.config?.clock.stable_for_s ?? 300} s without steps`, 'install systemd-timesyncd or chrony'),
        ];
      }
      return [fail('clock', `${iso}, not NTP-synchronized: readings are held until it is`, NTP_FIX)];
    },
  };
}

export const clockCheck = clockCheckWith(() => readNtpStatus());
