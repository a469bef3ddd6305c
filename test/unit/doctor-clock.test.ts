// doctor's clock line judges by the daemon's own rule: a clock the daemon would not trust
// (nothing published) is a FAIL naming what ends the wait; trusted without NTP is a WARN.
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import { clockCheckWith, type DaemonClock } from '../../src/ops/doctor/clock.js';
import type { DoctorEnv } from '../../src/ops/doctor/types.js';
import type { NtpStatus } from '../../src/ops/clock/clock-trust.js';

const NOW = Date.parse('2026-11-29T06:00:00Z');
const env = (clock: Record<string, unknown> = {}): DoctorEnv => ({
  configPath: 'test.yaml',
  config: validateConfig({ organization_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301', data_dir: '/tmp/x', prices: { source: 'none', regions: [] }, clock }, 'test', {}),
  configProblems: [],
  now: () => NOW,
  timeoutMs: 1000,
  serviceUser: 'metergate',
  results: [],
});
const line = async (ntp: NtpStatus, uptimeS: number, clock: Record<string, unknown> = {}, daemon: DaemonClock | null = null) =>
  (await clockCheckWith(async () => ntp, () => uptimeS * 1000, async () => daemon).run(env(clock)))[0]!;

describe('doctor: clock', () => {
  it('FAILs a box whose NTP state cannot be read, 60 s after boot: nothing is published for 240 s more, and names clock.trust: system', async () => {
    const r = await line('unknown', 60);
    expect(r.status).toBe('fail');
    expect(r.detail).toContain('publishes nothing');
    expect(r.detail).toContain('2026-11-29T06:04:00.000Z');
    expect(r.fix).toContain('`clock.trust: system`');
  });
  it('WARNs the same box once it has been up longer than clock.stable_for_s: published, but unconfirmed', async () => {
    const r = await line('unknown', 1523);
    expect(r.status).toBe('warn');
    expect(r.fix).toContain('systemd-timesyncd or chrony');
  });
  it('FAILs an unsynchronized clock naming NTP and clock.trust: system; PASSes synchronized and clock.trust: system', async () => {
    const r = await line('unsynchronized', 10_000);
    expect(r.status).toBe('fail');
    expect(r.fix).toMatch(/set-ntp true.*`clock\.trust: system`/);
    expect((await line('synchronized', 10)).status).toBe('pass');
    expect((await line('unknown', 10, { trust: 'system' })).status).toBe('pass');
  });
  it('asks the running daemon first: its wait is a FAIL with its reason and fix; a clock it trusts is a WARN when a restart would wait', async () => {
    const holding = await line('synchronized', 10_000, {}, { trusted: false, reason: 'waiting for NTP synchronization', held_samples: 12, fix: 'set `clock.trust: system`' });
    expect(holding.status).toBe('fail');
    expect(holding.detail).toContain('holds 12 reading(s) and publishes nothing');
    expect(holding.fix).toBe('set `clock.trust: system`');
    const trusted = await line('unsynchronized', 10_000, {}, { trusted: true, reason: 'the system clock is NTP-synchronized', held_samples: 0, fix: null });
    expect(trusted.status).toBe('warn');
    expect(trusted.detail).toContain('the running daemon trusts the clock');
  });
});
