// The one-pass reader of meter readings must report what ajv reports for the same items
// against the MeterReading schema of openapi.json (it replaces ajv there for speed).
import { describe, expect, it } from 'vitest';
import { HttpProblem, type FieldError } from '../../src/http/errors.js';
import { meterReadingErrors, readMeterReadings } from '../../src/http/readings-input.js';
import { fieldErrors, schemaValidator } from '../../src/http/validate.js';

const VALUES: unknown[] = [0, 1.5, -1, 1e9, 1e9 + 1, 1e300, Infinity, -0, '1', '', 'x'.repeat(70), null, true, [], {}, '2025-01-01T00:00:00Z', 'x', 7];
const KEYS = ['reading_kwh', 'timestamp', 'extra', 'Reading_kwh'];

describe('readMeterReadings', () => {
  it('agrees with ajv on 3,000 generated items', () => {
    const validate = schemaValidator('MeterReading');
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let i = 0; i < 3000; i++) {
      let item: unknown;
      if (rnd(10) === 0) item = VALUES[rnd(VALUES.length)];
      else {
        const obj: Record<string, unknown> = {};
        for (const key of KEYS) if (rnd(4) !== 0 || key === KEYS[0] || key === KEYS[1]) if (rnd(5) !== 0 || key.startsWith('e') || key.startsWith('R')) obj[key] = VALUES[rnd(VALUES.length)];
        if (rnd(3) === 0) delete obj.extra;
        if (rnd(3) === 0) delete obj.Reading_kwh;
        item = obj;
      }
      const ours: FieldError[] = [];
      meterReadingErrors(item, '', ours);
      const ajvSays = validate(item) ? [] : fieldErrors(validate, 100);
      const norm = (errs: FieldError[]) => errs.map((e) => `${e.path.replace(/^\./, '') || '(body)'}: ${e.message}`).sort();
      expect(norm(ours), JSON.stringify(item)).toEqual(norm(ajvSays));
    }
  });

  it('parses good items and names bad ones by index', () => {
    expect(readMeterReadings([{ reading_kwh: 1, timestamp: '2025-01-01T00:00:00Z' }, { timestamp: '2025-01-01T01:00:00+01:00', reading_kwh: 2 }])).toEqual([
      { timestampMs: Date.UTC(2025, 0, 1), energyKwh: 1 },
      { timestampMs: Date.UTC(2025, 0, 1), energyKwh: 2 },
    ]);
    try {
      readMeterReadings([{ reading_kwh: 1, timestamp: '2025-01-01T00:00:00' }, { reading_kwh: '2', timestamp: '2025-01-01T00:00:10Z' }, 5]);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(HttpProblem);
      expect((err as HttpProblem).status).toBe(422);
      expect((err as HttpProblem).errors?.map((e) => e.path)).toEqual(['meter_readings[0].timestamp', 'meter_readings[1].reading_kwh', 'meter_readings[2]']);
    }
  });
});
