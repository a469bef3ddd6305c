// Whether the kernel's clock is NTP-synchronized (timedatectl, else timesyncd's flag file).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { NtpStatus } from './clock-trust.js';

/**
 * Whether the kernel considers the system clock synchronized. `timedatectl` reports the
 * kernel's STA_UNSYNC flag (adjtimex), which systemd-timesyncd, chrony and ntpd all
 * maintain. Without timedated (containers, minimal images) systemd-timesyncd's flag file
 * is the next best source; if neither exists the status is unknown.
 */
export function readNtpStatus(timeoutMs = 3000): Promise<NtpStatus> {
  return new Promise((resolve) => {
    execFile('timedatectl', ['show', '-p', 'NTPSynchronized', '--value'], { timeout: timeoutMs }, (err, stdout) => {
      const answer = String(stdout).trim();
      if (!err && (answer === 'yes' || answer === 'no')) return resolve(answer === 'yes' ? 'synchronized' : 'unsynchronized');
      if (existsSync('/run/systemd/timesync/synchronized')) return resolve('synchronized');
      if (existsSync('/run/systemd/timesync')) return resolve('unsynchronized');
      resolve('unknown');
    });
  });
}
