import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { BUILD_DATE_MS } from '../../src/version.js';
import { libfaketimePath } from '../helpers/peers.js';

const LIBFAKETIME = libfaketimePath();
if (!LIBFAKETIME) console.warn('libfaketime not found (Debian package faketime, see scripts/install-test-deps): skipping the faked-clock test');

type Line = { tick?: number; held?: number; trusted?: boolean; released?: string; sampledAtMs: number; nowMs: number };

describe.skipIf(!LIBFAKETIME)('clock safety under libfaketime', () => {
  it('holds samples read while the clock says 2020, re-stamps them once NTP has set it, and never releases a wrong time', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mg-faketime-'));
    const timeFile = join(dir, 'faketime');
    const ntpFile = join(dir, 'ntp');
    writeFileSync(timeFile, '@2020-01-01 00:00:00'); // a Pi without RTC after a long power cut
    writeFileSync(ntpFile, 'unsynchronized');
    const child = spawn(process.execPath, ['--import', 'tsx', resolve('test/fixtures/clock-guard-under-faketime.ts'), ntpFile], {
      env: {
        ...process.env,
        LD_PRELOAD: LIBFAKETIME,
        FAKETIME_TIMESTAMP_FILE: timeFile,
        FAKETIME_NO_CACHE: '1',
        // The monotonic clock stays real, as on the gateway: NTP steps only the wall clock.
        FAKETIME_DONT_FAKE_MONOTONIC: '1',
      },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const lines: Line[] = [];
    let realStepMs = 0;
    try {
      await new Promise<void>((done, fail) => {
        child.once('exit', (code) => fail(new Error(`fixture exited ${code}`)));
        createInterface({ input: child.stdout! }).on('line', (raw) => {
          const line = JSON.parse(raw) as Line;
          lines.push(line);
          if (line.tick !== undefined && line.held! >= 3 && realStepMs === 0) {
            expect(line.trusted).toBe(false);
            expect(line.nowMs).toBeLessThan(BUILD_DATE_MS);
            // NTP answers: the wall clock steps to the real time and the kernel reports sync.
            realStepMs = Date.now();
            writeFileSync(timeFile, `@${new Date(realStepMs).toISOString().replace('T', ' ').slice(0, 19)}`);
            writeFileSync(ntpFile, 'synchronized');
          }
          if (line.tick !== undefined && line.trusted && lines.filter((l) => l.released && l.sampledAtMs >= realStepMs - 1000).length >= 2) done();
        });
      });
    } finally {
      child.stdin!.end('stop\n');
      await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
      rmSync(dir, { recursive: true, force: true });
    }
    const released = lines.filter((l) => l.released);
    const heldBefore = lines.filter((l) => l.tick !== undefined && !l.trusted).length;
    expect(heldBefore).toBeGreaterThanOrEqual(3);
    // Every sample comes out exactly once, in order, with a plausible time no later than the clock that released it.
    expect(released.map((l) => l.released)).toEqual(released.map((_, i) => `s${i + 1}`));
    for (const l of released) {
      expect(l.sampledAtMs).toBeGreaterThanOrEqual(BUILD_DATE_MS);
      expect(l.sampledAtMs).toBeLessThanOrEqual(l.nowMs);
    }
    const times = released.map((l) => l.sampledAtMs);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    // The samples read in "2020" were re-stamped to the real time of their reading (just before the step).
    expect(times[0]).toBeGreaterThan(realStepMs - 60_000);
  });
});
