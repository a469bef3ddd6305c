// The week-ahead total load forecast (ENTSO-E A65, processType A31) decoded by the GL
// parser. No complete recorded A31 response was found in public repositories (one Java
// test embeds an abbreviated CZ 2016 one: businessType A60 minimum / A61 maximum, P1D), so
// this test runs on the REAL recorded day-ahead A65 response (../shared/data/entsoe), read
// once as it is (day ahead -> `load`) and once with only its process type and business type
// relabelled to the week-ahead ones: the decoding of the values, periods and resolution is
// the recorded document's, the week-ahead labels are not a recording.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseGlDocument } from '../../src/prices/exogenous/entsoe-gl.js';
import { hasSharedData, sharedData, SKIP_REASON } from '../helpers/shared-data.js';

describe.skipIf(!hasSharedData)(`week-ahead load forecast parse${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  const recorded = () => readFileSync(sharedData('entsoe/a65-nl-2020-11-19-load-forecast.xml'), 'utf8');
  const relabelled = (businessType: string) =>
    recorded().replace('<process.processType>A01</process.processType>', '<process.processType>A31</process.processType>').replace('<businessType>A04</businessType>', `<businessType>${businessType}</businessType>`);

  it('the recorded day-ahead document stays `load` (processType A01)', () => {
    const r = parseGlDocument(recorded(), 'NL');
    if (r.kind !== 'points') throw new Error('expected points');
    expect(new Set(r.points.map((p) => p.series))).toEqual(new Set(['load']));
    expect(r.points).toHaveLength(96);
  });

  it('processType A31 names the series by businessType: A60 minimum, A61 maximum, never `load`', () => {
    for (const [business, series] of [['A60', 'load_week_ahead_min'], ['A61', 'load_week_ahead_max']] as const) {
      const r = parseGlDocument(relabelled(business), 'NL');
      if (r.kind !== 'points') throw new Error('expected points');
      expect(new Set(r.points.map((p) => p.series))).toEqual(new Set([series]));
      expect(r.points).toHaveLength(96);
      expect(r.points[0]).toMatchObject({ marketArea: 'NL', startMs: Date.parse('2020-11-18T23:00Z'), durationS: 900, valueMw: 12322 });
    }
  });

  it('a week-ahead series of another business type is left out and reported; an unknown process type is an error', () => {
    const r = parseGlDocument(relabelled('A04'), 'NL');
    expect(r).toEqual({ kind: 'points', points: [], ignoredPsrTypes: [], ignoredBusinessTypes: ['A04'] });
    expect(() => parseGlDocument(recorded().replace('<process.processType>A01</process.processType>', '<process.processType>A16</process.processType>'), 'NL')).toThrow(/process type A16/);
  });
});
