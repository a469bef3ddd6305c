// Meter readings from a request body: checked against the MeterReading schema of the
// OpenAPI document (limits read from it) and parsed, in ONE pass. For a week of 10-s
// readings this is 60,480 items; ajv plus a separate parse pass cost twice as much.
// test/unit/readings-input.test.ts checks it reports what ajv reports on the same items.
import type { EnergyReading } from '../pricing/session-cost.js';
import { HttpProblem, type FieldError } from './errors.js';
import { openApiDocument } from './openapi.js';
import { parseTimestamp } from './timestamps.js';

interface NumberSchema { minimum: number; maximum: number }
interface StringSchema { maxLength: number; minLength: number }
const itemSchema = openApiDocument.components.schemas.MeterReading as {
  required: string[];
  properties: { reading_kwh: NumberSchema; timestamp: StringSchema };
};
const KWH = itemSchema.properties.reading_kwh;
const TS = itemSchema.properties.timestamp;
const MAX_LISTED = 20;

/** Field errors of one item, in the words ajv uses (see validate.ts toFieldError). */
export function meterReadingErrors(item: unknown, path: string, out: FieldError[]): void {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) {
    out.push({ path, message: 'must be object' });
    return;
  }
  const rec = item as Record<string, unknown>;
  for (const key in rec) {
    if (key !== 'reading_kwh' && key !== 'timestamp') out.push({ path: `${path}.${key.slice(0, 100)}`, message: 'is not a known field' });
  }
  const kwh = rec.reading_kwh;
  if (kwh === undefined) out.push({ path: `${path}.reading_kwh`, message: 'is required' });
  else if (typeof kwh !== 'number') out.push({ path: `${path}.reading_kwh`, message: 'must be number' });
  else if (kwh < KWH.minimum) out.push({ path: `${path}.reading_kwh`, message: `must be >= ${KWH.minimum}` });
  else if (kwh > KWH.maximum) out.push({ path: `${path}.reading_kwh`, message: `must be <= ${KWH.maximum}` });
  const ts = rec.timestamp;
  if (ts === undefined) out.push({ path: `${path}.timestamp`, message: 'is required' });
  else if (typeof ts !== 'string') out.push({ path: `${path}.timestamp`, message: 'must be string' });
  else if (ts.length > TS.maxLength) out.push({ path: `${path}.timestamp`, message: `must NOT have more than ${TS.maxLength} characters` });
  else if (ts.length < TS.minLength) out.push({ path: `${path}.timestamp`, message: `must NOT have fewer than ${TS.minLength} characters` });
}

/**
 * Checks and parses `items` (already known to be an array). Throws 422 listing the first
 * problems: schema errors, then timestamps without `Z`/offset or impossible dates.
 */
export function readMeterReadings(items: readonly unknown[], path = 'meter_readings'): EnergyReading[] {
  const errors: FieldError[] = [];
  const out = collectMeterReadings(items, errors, path);
  if (!out) throw new HttpProblem(422, 'some meter readings are invalid', { errors: errors.slice(0, MAX_LISTED) });
  return out;
}

/**
 * As readMeterReadings, but adds the problems to `errors` (at most 20 of its own) and
 * answers null, so a caller can list them with the request's other mistakes in one 422.
 */
export function collectMeterReadings(items: readonly unknown[], into: FieldError[], path = 'meter_readings'): EnergyReading[] | null {
  const out: EnergyReading[] = new Array(items.length);
  const errors: FieldError[] = [];
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as { reading_kwh?: unknown; timestamp?: unknown } | null;
    // Fast path: the well-formed item.
    if (item !== null && typeof item === 'object' && typeof item.reading_kwh === 'number' && typeof item.timestamp === 'string') {
      const kwh = item.reading_kwh;
      const ts = item.timestamp;
      let keys = 0;
      for (const _ in item) keys++;
      if (keys === 2 && kwh >= KWH.minimum && kwh <= KWH.maximum && ts.length <= TS.maxLength && ts.length >= TS.minLength) {
        const ms = parseTimestamp(ts);
        if (typeof ms === 'number') out[i] = { timestampMs: ms, energyKwh: kwh };
        else if (errors.length < MAX_LISTED) errors.push({ path: `${path}[${i}].timestamp`, message: ms });
        continue;
      }
    }
    if (errors.length < MAX_LISTED) {
      const before = errors.length;
      meterReadingErrors(item, `${path}[${i}]`, errors);
      // Never leave a hole in `out` unreported (e.g. a NaN, which JSON cannot carry anyway).
      if (errors.length === before) errors.push({ path: `${path}[${i}]`, message: 'is not a valid meter reading' });
    }
  }
  if (errors.length === 0) return out;
  into.push(...errors.slice(0, MAX_LISTED));
  return null;
}

/** 413 before schema validation, so an oversized array is not walked item by item. */
export function assertReadingCap(body: unknown, maxReadings: number, path = 'meter_readings'): void {
  const readings = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[path] : undefined;
  if (Array.isArray(readings) && readings.length > maxReadings) {
    throw new HttpProblem(413, `${readings.length} meter readings is more than the limit of ${maxReadings} per request`, {
      errors: [{ path, message: `must have at most ${maxReadings} items` }],
    });
  }
}
