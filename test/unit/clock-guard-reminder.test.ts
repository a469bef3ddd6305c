// The clock guard's log during a wait: said at start with what ends it, again after a minute,
// then at doubling intervals up to an hour; nothing more once trusted.
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import { EventBus } from '../../src/events.js';
import { createLogger } from '../../src/log.js';
import { ClockGuard } from '../../src/ops/clock/clock-guard.js';
import type { NtpStatus } from '../../src/ops/clock/clock-trust.js';

const BUILD = Date.parse('2026-11-01T00:00:00Z');
const T0 = Date.parse('2026-11-29T06:00:00Z');

describe('clock guard: the wait is said, not repeated endlessly', () => {
  it('warns at start naming the fix, after 1, 2, 4 … minutes up to hourly, and stops once trusted', async () => {
    const lines: Array<{ msg: string; fix?: string }> = [];
    const logger = createLogger('info', { write: (s: string) => void lines.push(JSON.parse(s)) });
    const wall = { now: T0 };
    const mono = { now: 0 };
    let ntp: NtpStatus = 'unsynchronized';
    const config = validateConfig({ organization_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301', data_dir: '/tmp/unused', clock: { trust: 'auto' } }, 'test', {});
    const guard = new ClockGuard({ config, logger, events: new EventBus(logger), clock: { now: () => wall.now }, metrics: new Registry(), monotonicMs: () => mono.now, ntpStatus: async () => ntp, uptimeMs: () => 10_000_000, buildDateMs: BUILD });
    await guard.start();
    await guard.stop(); // the test drives check() itself
    const waits = () => lines.filter((l) => l.msg.startsWith('clock not trusted yet'));
    expect(waits()).toHaveLength(1);
    expect(waits()[0]!.msg).toContain('waiting for NTP synchronization. To end it: let NTP synchronize');
    expect(waits()[0]!.fix).toContain('`clock.trust: system`');
    // Checked every 5 s for 3 hours: said at 1, 3, 7, 15, 31, 63 and 123 min (then hourly).
    const saidAtMin: number[] = [];
    for (let s = 5; s <= 3 * 3600; s += 5) {
      mono.now = s * 1000;
      wall.now = T0 + s * 1000;
      const before = waits().length;
      await guard.check();
      if (waits().length > before) saidAtMin.push(s / 60);
    }
    expect(saidAtMin).toEqual([1, 3, 7, 15, 31, 63, 123]);
    ntp = 'synchronized';
    await guard.check();
    expect(lines.at(-1)!.msg).toBe('clock trusted');
    const said = waits().length;
    mono.now += 7_200_000;
    wall.now += 7_200_000;
    await guard.check();
    expect(waits()).toHaveLength(said);
  });
});
