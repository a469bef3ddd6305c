// The pure parts of the OCPP central system: a transaction's register as session readings,
// the id-tag rule, and sampled values checked whole before anything is stored.
import { describe, expect, it } from 'vitest';
import { authorizeIdTag } from '../../src/ocpp/id-tags.js';
import { energySoFarWh, registerReadings, type RegisterValue } from '../../src/ocpp/register-readings.js';
import { sampledValueRows } from '../../src/ocpp/sampled-values.js';

const T0 = Date.parse('2025-10-01T08:00:00Z');
const min = (m: number) => T0 + m * 60_000;
const v = (minute: number, value: number, extra: Partial<RegisterValue> = {}): RegisterValue => ({ sampledAtMs: min(minute), phase: '', location: '', value, unit: 'Wh', ...extra });

describe('energySoFarWh', () => {
  it('is the newest register value (Wh or kWh) less meterStart, and 0 before any value', () => {
    expect(energySoFarWh(12_500, null)).toBe(0);
    expect(energySoFarWh(12_500, { value: 14_350, unit: 'Wh' })).toBe(1850);
    expect(energySoFarWh(12_500, { value: 14.35, unit: 'kWh' })).toBeCloseTo(1850, 6);
  });
});

describe('registerReadings', () => {
  it('puts meterStart, the values by their own timestamps (sent in any order) and meterStop in time order, in kWh', () => {
    const readings = registerReadings({ startedAtMs: min(0), meterStartWh: 1000, stoppedAtMs: min(30), meterStopWh: 4000 }, [v(20, 3000), v(10, 2, { unit: 'kWh' })]);
    expect(readings).toEqual([
      { timestampMs: min(0), energyKwh: 1 },
      { timestampMs: min(10), energyKwh: 2 },
      { timestampMs: min(20), energyKwh: 3 },
      { timestampMs: min(30), energyKwh: 4 },
    ]);
  });

  it('an active transaction ends with its last value; the connector total wins over phases at an instant; phases alone are summed', () => {
    const readings = registerReadings({ startedAtMs: min(0), meterStartWh: 0, stoppedAtMs: null, meterStopWh: null }, [
      v(10, 999, { phase: 'L1' }),
      v(10, 1500),
      v(20, 1000, { phase: 'L1' }),
      v(20, 1000, { phase: 'L2' }),
      v(20, 1000, { phase: 'L3' }),
    ]);
    expect(readings).toEqual([
      { timestampMs: min(0), energyKwh: 0 },
      { timestampMs: min(10), energyKwh: 1.5 },
      { timestampMs: min(20), energyKwh: 3 },
    ]);
  });

  it('ignores values measured elsewhere than the outlet and units that are not energy', () => {
    const readings = registerReadings({ startedAtMs: min(0), meterStartWh: 0, stoppedAtMs: null, meterStopWh: null }, [v(10, 5000, { location: 'EV' }), v(10, 7, { unit: 'varh' }), v(15, 800, { location: 'Outlet' })]);
    expect(readings).toEqual([
      { timestampMs: min(0), energyKwh: 0 },
      { timestampMs: min(15), energyKwh: 0.8 },
    ]);
  });
});

describe('authorizeIdTag', () => {
  it('accept_all accepts every tag; a list accepts exactly its tags, case-insensitively', () => {
    expect(authorizeIdTag('accept_all', 'ANYTHING')).toBe('Accepted');
    expect(authorizeIdTag({ id_tags: ['04A1B2'] }, '04a1b2')).toBe('Accepted');
    expect(authorizeIdTag({ id_tags: ['04A1B2'] }, '04A1B3')).toBe('Invalid');
    expect(authorizeIdTag({ id_tags: [] }, '04A1B2')).toBe('Invalid');
  });
});

describe('sampledValueRows', () => {
  it('applies the OCPP 1.6 defaults (Energy.Active.Import.Register in Wh) and skips signed data', () => {
    const rows = sampledValueRows([{ timestamp: '2025-10-01T08:10:00Z', sampledValue: [{ value: '1500' }, { value: '3.2', measurand: 'Power.Active.Import', phase: 'L1' }, { value: 'c2lnbmVk', format: 'SignedData' }] }], 'meterValue');
    expect(rows).toEqual([
      { sampledAtMs: min(10), measurand: 'Energy.Active.Import.Register', phase: '', location: '', context: '', value: 1500, unit: 'Wh' },
      { sampledAtMs: min(10), measurand: 'Power.Active.Import', phase: 'L1', location: '', context: '', value: 3.2, unit: 'W' },
    ]);
  });

  it('refuses the whole call when one raw value is not a number, naming it', () => {
    expect(() => sampledValueRows([{ timestamp: '2025-10-01T08:10:00Z', sampledValue: [{ value: '1500' }, { value: '' }] }], 'meterValue')).toThrow(/meterValue\[0\]\.sampledValue\[1\]\.value/);
    expect(() => sampledValueRows([{ timestamp: 'yesterday', sampledValue: [{ value: '1' }] }], 'transactionData')).toThrow(/transactionData\[0\]\.timestamp/);
  });
});
