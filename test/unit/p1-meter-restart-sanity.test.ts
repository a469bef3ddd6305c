// A P1 meter's own sanity check after a restart (bookkeepingFromStore): judged against the
// reading the store kept, also when the gateway's wall clock now reads earlier than that
// reading's time (a Raspberry Pi without RTC booting on fake-hwclock or 1970 until NTP answers;
// docs/clock-safety.md): the rise since then cannot be judged against a time, a counter going
// backwards still can.
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { MeterConfig } from '../../src/config/types.js';
import { createLogger } from '../../src/log.js';
import type { Reading } from '../../src/modbus/sanity.js';
import { acceptReading, bookkeepingFromStore, meterMetrics } from '../../src/sources/meter-bookkeeping.js';

const config: MeterConfig = { resource_id: 'a1b2c3d4-0000-4000-8000-000000000001', bus: 'p1', unit_id: 1, profile: 'p1', extra_metrics: [] };
const STORED_AT = Date.parse('2026-11-20T12:00:00Z');
const stored = { resourceId: config.resource_id, sampledAtMs: STORED_AT, metrics: [{ name: 'active_energy_import', value: 5_000_000, unit: 'Wh' }, { name: 'total_active_power', value: 11_000, unit: 'W' }] };

function judge(readings: Reading[]): boolean[] {
  const m = bookkeepingFromStore(config, [stored]);
  const dropped = meterMetrics(new Registry()).dropped;
  const out = { dropped, logger: createLogger('silent'), logFields: {} };
  return readings.map((r) => acceptReading(m, r, 100_000, out));
}

describe('a P1 meter after a restart, the gateway clock behind the stored reading', () => {
  it('a car charged while the gateway was down: the rise is believed, the readings after it too', () => {
    // Booted an hour "before" the stored reading (fake-hwclock), 33 kWh more on the register.
    const behind = STORED_AT - 3_600_000;
    const verdicts = judge([
      { sampledAtMs: behind, values: { active_energy_import: 5_033_000, total_active_power: 11_000 } },
      { sampledAtMs: behind + 10_000, values: { active_energy_import: 5_033_030, total_active_power: 11_000 } },
    ]);
    expect(verdicts).toEqual([true, true]);
  });

  it('booted at 1970: still believed', () => {
    expect(judge([{ sampledAtMs: 10_000, values: { active_energy_import: 5_002_000 } }])).toEqual([true]);
  });

  it('a register lower than the stored one is still dropped, whatever the clock', () => {
    expect(judge([{ sampledAtMs: STORED_AT - 3_600_000, values: { active_energy_import: 4_999_000 } }])).toEqual([false]);
  });

  it('with the clock right, a rise faster than the meter allows is still dropped', () => {
    expect(judge([{ sampledAtMs: STORED_AT + 10_000, values: { active_energy_import: 5_033_000 } }])).toEqual([false]);
  });
});
