// Which exogenous series a live forecast may use, on the real A65 response and the real
// NL history: fetched by the origin, covering the target day, and read for an hourly model
// as the history files hold it (the first quarter-hour of each hour).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { chooseExogenous } from '../../src/forecast/exogenous-availability.js';
import { localDayOf } from '../../src/forecast/local-days.js';
import { parseGlDocument } from '../../src/prices/exogenous/entsoe-gl.js';
import { requireMarket } from '../../src/prices/markets.js';
import { hasSharedData, sharedData, SKIP_REASON } from '../helpers/shared-data.js';

const NL = requireMarket('NL');
const FETCHED = Date.parse('2020-11-18T16:00Z');

describe.skipIf(!hasSharedData)(`exogenous availability${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  const a65 = () => {
    const r = parseGlDocument(readFileSync(sharedData('entsoe/a65-nl-2020-11-19-load-forecast.xml'), 'utf8'), 'NL');
    if (r.kind !== 'points') throw new Error('expected points');
    return r.points.map((p) => ({ startMs: p.startMs, durationS: p.durationS, value: p.valueMw, fetchedAtMs: FETCHED }));
  };
  const target = localDayOf(NL.timeZone, Date.parse('2020-11-19T12:00Z'));

  it('an hourly model reads the quarter-hours as the history file does: the first of each hour (12322, 11807, ...)', () => {
    const c = chooseExogenous({ timeZone: NL.timeZone, series: { load: a65() }, originMs: FETCHED, targetDay: target, windowFirstDay: target, slots: 24 });
    expect(c.used).toEqual(['load']);
    expect(c.note).toBe('');
    const load = c.inputs!.load;
    expect(load).toHaveLength(24);
    expect(load.slice(0, 2).map((p) => [p.durationS, p.value])).toEqual([[3600, 12322], [3600, 11807]]);
    // A quarter-hour model takes all 96.
    const fine = chooseExogenous({ timeZone: NL.timeZone, series: { load: a65() }, originMs: FETCHED, targetDay: target, windowFirstDay: target, slots: 96 });
    expect(fine.inputs!.load).toHaveLength(96);
  });

  it('a forecast fetched after the origin, or a target day it does not cover, leaves the forecast price only, saying why', () => {
    const late = chooseExogenous({ timeZone: NL.timeZone, series: { load: a65() }, originMs: FETCHED - 1, targetDay: target, windowFirstDay: target, slots: 24 });
    expect(late).toEqual({ used: [], note: 'price only: no load forecast for 2020-11-19 fetched by the origin' });
    const next = chooseExogenous({ timeZone: NL.timeZone, series: { load: a65() }, originMs: FETCHED, targetDay: target + 1, windowFirstDay: target, slots: 24 });
    expect(next.used).toEqual([]);
    expect(next.note).toBe('price only: no load forecast for 2020-11-20 fetched by the origin');
    // One day of history where the window asks for 28: not enough to fit on.
    const thin = chooseExogenous({ timeZone: NL.timeZone, series: { load: a65() }, originMs: FETCHED, targetDay: target, windowFirstDay: target - 28, slots: 24 });
    expect(thin.note).toBe('price only: load covers 0 % of the training window (needs 80 %)');
  });
});
