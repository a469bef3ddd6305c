import { describe, expect, it } from 'vitest';
import { ClockTrust, DEFAULT_CLOCK_POLICY, isPlausibleTime, type ClockTrustPolicy } from '../../src/ops/clock/clock-trust.js';

const BUILD = Date.parse('2026-11-01T00:00:00Z');
const policy = (over: Partial<ClockTrustPolicy> = {}): ClockTrustPolicy => ({ ...DEFAULT_CLOCK_POLICY, buildDateMs: BUILD, ...over });
const FAKE_HWCLOCK = Date.parse('2026-05-01T08:00:00Z'); // last shutdown, before this build
const REAL = Date.parse('2026-11-23T10:00:00.000Z');

describe('clock plausibility', () => {
  it('rejects times before the build date and far beyond it', () => {
    const p = policy();
    expect(isPlausibleTime(BUILD - 1, p)).toBe(false);
    expect(isPlausibleTime(0, p)).toBe(false);
    expect(isPlausibleTime(BUILD, p)).toBe(true);
    expect(isPlausibleTime(REAL, p)).toBe(true);
    expect(isPlausibleTime(Date.parse('2106-02-07T06:28:15Z'), p)).toBe(false);
    expect(isPlausibleTime(Number.NaN, p)).toBe(false);
  });
});

describe('clock trust on a gateway without RTC', () => {
  it('holds samples taken before NTP sync and re-stamps them from the monotonic clock', () => {
    const trust = new ClockTrust<string>(policy({ mode: 'ntp' }));
    // Boot: fake-hwclock time, monotonic 0. Wall-mono offset = FAKE_HWCLOCK.
    expect(trust.observe({ wallMs: FAKE_HWCLOCK, monoMs: 0, ntp: 'unsynchronized' })).toEqual([]);
    expect(trust.accept('a', FAKE_HWCLOCK + 10_000, 10_000)).toEqual({ action: 'hold', evicted: 0 });
    expect(trust.accept('b', FAKE_HWCLOCK + 20_000, 20_000).action).toBe('hold');
    expect(trust.isTrusted).toBe(false);
    expect(trust.wallTimeOf(20_000)).toBeNull();
    // NTP steps the clock at monotonic 25 s to the real time.
    const events = trust.observe({ wallMs: REAL, monoMs: 25_000, ntp: 'synchronized' });
    expect(events[0]).toEqual({ kind: 'step', stepMs: REAL - 25_000 - FAKE_HWCLOCK });
    expect(events[1]).toMatchObject({ kind: 'trusted', dropped: 0 });
    const released = events[1].kind === 'trusted' ? events[1].released : [];
    expect(released).toEqual([
      { item: 'a', sampledAtMs: REAL - 15_000 },
      { item: 'b', sampledAtMs: REAL - 5_000 },
    ]);
    expect(trust.heldCount).toBe(0);
    expect(trust.accept('c', REAL + 5_000, 30_000)).toEqual({ action: 'pass', sampledAtMs: REAL + 5_000 });
    expect(trust.wallTimeOf(30_000)).toBe(REAL + 5_000);
  });

  it('never trusts a plausible-looking clock in ntp mode until NTP says so', () => {
    const trust = new ClockTrust<string>(policy({ mode: 'ntp' }));
    for (let m = 0; m <= 3_600_000; m += 60_000) trust.observe({ wallMs: REAL + m, monoMs: m, ntp: 'unsynchronized' });
    expect(trust.isTrusted).toBe(false);
    expect(trust.why).toMatch(/waiting for NTP/);
  });

  it('does not trust a clock before the build date even if NTP claims sync', () => {
    const trust = new ClockTrust<string>(policy());
    trust.observe({ wallMs: BUILD - 86_400_000, monoMs: 0, ntp: 'synchronized' });
    expect(trust.isTrusted).toBe(false);
    expect(trust.why).toMatch(/before the build date/);
  });

  it('auto mode without NTP information trusts a plausible clock that ran without steps for stableForMs', () => {
    const trust = new ClockTrust<string>(policy({ mode: 'auto', stableForMs: 300_000 }));
    trust.observe({ wallMs: REAL, monoMs: 0, ntp: 'unknown' });
    trust.accept('x', REAL + 1_000, 1_000);
    trust.observe({ wallMs: REAL + 200_000, monoMs: 200_000, ntp: 'unknown' });
    expect(trust.isTrusted).toBe(false);
    // a step resets the stability window
    trust.observe({ wallMs: REAL + 260_000, monoMs: 250_000, ntp: 'unknown' });
    trust.observe({ wallMs: REAL + 410_000, monoMs: 400_000, ntp: 'unknown' });
    expect(trust.isTrusted).toBe(false);
    const events = trust.observe({ wallMs: REAL + 560_000, monoMs: 550_000, ntp: 'unknown' });
    expect(trust.isTrusted).toBe(true);
    // re-stamped with the offset at trust time (the stepped clock), not the one it was read with
    expect(events.find((e) => e.kind === 'trusted')).toMatchObject({ released: [{ item: 'x', sampledAtMs: REAL + 11_000 }] });
  });

  it('auto mode without NTP information counts the stable time from boot: a box up longer than stableForMs is trusted at once', () => {
    const trust = new ClockTrust<string>(policy({ mode: 'auto', stableForMs: 300_000 }));
    trust.observe({ wallMs: REAL, monoMs: 0, ntp: 'unknown', uptimeMs: 1_523_000 });
    expect(trust.isTrusted).toBe(true);
    expect(trust.why).toMatch(/has been up 1523 s .*has not stepped since the gateway started/);
    expect(trust.fix).toBeNull();
  });

  it('auto mode without NTP information, 60 s after boot: waits until 300 s after boot and says when and what ends it sooner', () => {
    const trust = new ClockTrust<string>(policy({ mode: 'auto', stableForMs: 300_000 }));
    trust.observe({ wallMs: REAL, monoMs: 0, ntp: 'unknown', uptimeMs: 60_000 });
    expect(trust.isTrusted).toBe(false);
    expect(trust.trustExpectedAtMs).toBe(REAL + 240_000);
    expect(trust.why).toContain(`since boot (at ${new Date(REAL + 240_000).toISOString()})`);
    expect(trust.fix).toMatch(/`clock\.trust: system`/);
    expect(trust.fix).toMatch(/systemd-timesyncd or chrony/);
    trust.observe({ wallMs: REAL + 240_000, monoMs: 240_000, ntp: 'unknown', uptimeMs: 300_000 });
    expect(trust.isTrusted).toBe(true);
  });

  it('auto mode without NTP information: after a step the time since boot no longer counts', () => {
    const trust = new ClockTrust<string>(policy({ mode: 'auto', stableForMs: 300_000 }));
    trust.observe({ wallMs: REAL, monoMs: 0, ntp: 'unknown', uptimeMs: 100_000 });
    // NTP (invisible to us) steps the clock by a minute at 20 s.
    trust.observe({ wallMs: REAL + 80_000, monoMs: 20_000, ntp: 'unknown', uptimeMs: 400_000 });
    expect(trust.isTrusted).toBe(false);
    expect(trust.why).toContain('since its last step');
    trust.observe({ wallMs: REAL + 380_000, monoMs: 320_000, ntp: 'unknown', uptimeMs: 700_000 });
    expect(trust.isTrusted).toBe(true);
  });

  it('names what ends each wait: NTP or clock.trust: system when unsynchronized, the right time when implausible', () => {
    const unsynced = new ClockTrust<string>(policy({ mode: 'auto' }));
    unsynced.observe({ wallMs: REAL, monoMs: 0, ntp: 'unsynchronized', uptimeMs: 10_000_000 });
    expect(unsynced.isTrusted).toBe(false);
    expect(unsynced.fix).toMatch(/timedatectl set-ntp true.*`clock\.trust: system`/);
    const ntpUnknown = new ClockTrust<string>(policy({ mode: 'ntp' }));
    ntpUnknown.observe({ wallMs: REAL, monoMs: 0, ntp: 'unknown', uptimeMs: 10_000_000 });
    expect(ntpUnknown.fix).toMatch(/`clock\.trust: auto`.*`clock\.trust: system`/);
    const wrong = new ClockTrust<string>(policy({ mode: 'system' }));
    wrong.observe({ wallMs: FAKE_HWCLOCK, monoMs: 0, ntp: 'unknown' });
    expect(wrong.fix).toMatch(/set the right time/);
  });

  it('system mode trusts any plausible clock at once', () => {
    const trust = new ClockTrust<string>(policy({ mode: 'system' }));
    trust.observe({ wallMs: REAL, monoMs: 0, ntp: 'unknown' });
    expect(trust.isTrusted).toBe(true);
  });

  it('drops held samples whose re-stamped time would be before the build date', () => {
    const trust = new ClockTrust<string>(policy({ mode: 'ntp' }));
    trust.observe({ wallMs: 0, monoMs: 0, ntp: 'unsynchronized' });
    trust.accept('early', 1_000, 1_000);
    // Trusted at monotonic 10 days with a wall time just after the build date: mono 1 s maps before it.
    const events = trust.observe({ wallMs: BUILD + 1_000, monoMs: 10 * 86_400_000, ntp: 'synchronized' });
    expect(events.find((e) => e.kind === 'trusted')).toMatchObject({ released: [], dropped: 1 });
    expect(trust.dropped).toBe(1);
  });

  it('bounds the held samples, dropping the oldest', () => {
    const trust = new ClockTrust<number>(policy({ mode: 'ntp', maxHeld: 3 }));
    trust.observe({ wallMs: 0, monoMs: 0, ntp: 'unsynchronized' });
    for (let i = 1; i <= 5; i++) trust.accept(i, i * 10_000, i * 10_000);
    expect(trust.heldCount).toBe(3);
    expect(trust.dropped).toBe(2);
    const events = trust.observe({ wallMs: REAL, monoMs: 60_000, ntp: 'synchronized' });
    const released = events.find((e) => e.kind === 'trusted');
    expect(released?.kind === 'trusted' && released.released.map((r) => r.item)).toEqual([3, 4, 5]);
  });

  it('stays trusted when NTP loses its servers, but not when the clock becomes implausible', () => {
    const trust = new ClockTrust<string>(policy({ mode: 'ntp' }));
    trust.observe({ wallMs: REAL, monoMs: 0, ntp: 'synchronized' });
    trust.observe({ wallMs: REAL + 86_400_000, monoMs: 86_400_000, ntp: 'unsynchronized' });
    expect(trust.isTrusted).toBe(true);
    const events = trust.observe({ wallMs: 0, monoMs: 86_500_000, ntp: 'unsynchronized' });
    expect(events.map((e) => e.kind)).toEqual(['step', 'untrusted']);
    expect(trust.accept('z', 1_000, 86_510_000).action).toBe('hold');
  });

  it('stops trusting at once when a sample carries an implausible time', () => {
    const trust = new ClockTrust<string>(policy({ mode: 'ntp' }));
    trust.observe({ wallMs: REAL, monoMs: 0, ntp: 'synchronized' });
    expect(trust.accept('bad', 1_000, 5_000).action).toBe('hold');
    expect(trust.isTrusted).toBe(false);
  });
});
