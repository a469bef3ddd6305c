// Exogenous series (day-ahead load, solar and wind forecasts): the real A65 response
// decoded, and the real ENTSO-E history files' columns imported into a real SQLite file,
// checked against each other (../shared/data/README.md: the history's Load_DA is the first
// quarter-hour of each local hour of the A65 document).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseGlDocument } from '../../src/prices/exogenous/entsoe-gl.js';
import { importPriceFile, formatImportResult, type ImportResult } from '../../src/prices/import.js';
import { EntsoeDocumentError } from '../../src/prices/sources/entsoe-xml.js';
import { CsvImportError } from '../../src/prices/sources/csv.js';
import { openDatabase, type Db } from '../../src/store/db.js';
import { ExogenousStore } from '../../src/store/exogenous.js';
import { exogenousGapsIn } from '../../src/prices/exogenous/exogenous-merge.js';
import { PriceStore } from '../../src/store/prices.js';
import { hasSharedData, sharedData, SKIP_REASON } from '../helpers/shared-data.js';

const A65 = 'entsoe/a65-nl-2020-11-19-load-forecast.xml';
const NOW = Date.UTC(2026, 0, 1);

describe.skipIf(!hasSharedData)(`exogenous series from real data${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let dir: string;
  let db: Db;
  let exogenous: ExogenousStore;
  let nl: ImportResult;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'mg-exogenous-'));
    db = openDatabase(join(dir, 'metergate.db'));
    exogenous = new ExogenousStore(db);
    nl = importPriceFile(new PriceStore(db), sharedData('prices/nl-2015-2023h1-entsoe-hourly.csv'), 'NL', NOW, { exogenous });
  });
  afterAll(() => {
    db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('decodes the real A65 document: 96 quarter-hours of NL load in MW, UTC', () => {
    const r = parseGlDocument(readFileSync(sharedData(A65), 'utf8'), 'NL');
    if (r.kind !== 'points') throw new Error('expected points');
    expect(r.points).toHaveLength(96);
    expect(new Set(r.points.map((p) => p.series))).toEqual(new Set(['load']));
    expect(r.points.every((p) => p.durationS === 900)).toBe(true);
    expect(r.points[0]).toMatchObject({ startMs: Date.parse('2020-11-18T23:00Z'), valueMw: 12322 });
    expect(r.points[4]).toMatchObject({ startMs: Date.parse('2020-11-19T00:00Z'), valueMw: 11807 });
    expect(r.points[95].startMs).toBe(Date.parse('2020-11-19T22:45Z'));
  });

  it('the history file holds the first quarter-hour of each local hour of the A65 document', () => {
    const r = parseGlDocument(readFileSync(sharedData(A65), 'utf8'), 'NL');
    if (r.kind !== 'points') throw new Error('expected points');
    const hourly = exogenous.points('NL', 'load', Date.parse('2020-11-18T23:00Z'), Date.parse('2020-11-19T23:00Z'));
    expect(hourly).toHaveLength(24);
    expect(hourly.map((p) => p.valueMw)).toEqual(r.points.filter((_, i) => i % 4 === 0).map((p) => p.valueMw));
    expect(hourly[0]).toMatchObject({ durationS: 3600, source: 'csv:nl-2015-2023h1-entsoe-hourly.csv', fetchedAtMs: NOW });
    // What the forecaster reads: the same periods, values and fetch times, without the strings.
    const year = [Date.parse('2020-01-01T00:00Z'), Date.parse('2021-01-01T00:00Z')] as const;
    for (const series of ['load', 'solar', 'wind_onshore', 'wind_offshore'] as const) {
      const full = exogenous.points('NL', series, ...year);
      expect(full.length).toBeGreaterThan(8000);
      expect(exogenous.fetchedValues('NL', series, ...year)).toEqual(full.map(({ startMs, durationS, valueMw, fetchedAtMs }) => ({ startMs, durationS, valueMw, fetchedAtMs })));
    }
  });

  it('a truncated A65 body is a document error, not data', () => {
    const xml = readFileSync(sharedData(A65), 'utf8');
    expect(() => parseGlDocument(xml.slice(0, Math.floor(xml.length / 2)), 'NL')).toThrow(EntsoeDocumentError);
    // An A44 body is not a load document.
    expect(() => parseGlDocument(readFileSync(sharedData('entsoe/a44-de-lu-2021-01-01.xml'), 'utf8'), 'DE-LU')).toThrow(/neither GL_MarketDocument/);
  });

  it('imports the four columns of the NL history, zero days left out, and prices status shows them', () => {
    const e = nl.exogenous!;
    expect(Object.keys(e.points).sort()).toEqual(['load', 'solar', 'wind_offshore', 'wind_onshore']);
    expect(e.points.load).toBeGreaterThan(70_000);
    expect(e.written).toBe(Object.values(e.points).reduce((s, n) => s + n, 0));
    expect(formatImportResult(nl)).toMatch(/exogenous: \d+ new point\(s\) stored/);
    const cov = exogenous.coverage('NL');
    const load = cov.find((c) => c.series === 'load')!;
    expect(load.firstStartMs).toBe(Date.parse('2015-01-04T23:00Z'));
    expect(load.lastEndMs).toBe(Date.parse('2023-06-30T22:00Z'));
    // Importing again fills nothing: stored values are kept.
    const again = importPriceFile(new PriceStore(db), sharedData('prices/nl-2015-2023h1-entsoe-hourly.csv'), 'NL', NOW + 1, { exogenous });
    expect(again.exogenous!.written).toBe(0);
    const out = execFileSync(process.execPath, ['dist/cli.js', 'prices', 'status', '--db', join(dir, 'metergate.db'), '--region', 'NL'], { encoding: 'utf8' });
    expect(out).toMatch(/exogenous \(load, solar, wind forecasts\):\n\s+load: \d+ points, 2015-01-04T23:00Z/);
    expect(out).toMatch(/wind_onshore: \d+ points/);
  });

  it('--exogenous on a file without the columns is refused and stores nothing', () => {
    const before = exogenous.coverage('NL').map((c) => c.points);
    expect(() => importPriceFile(new PriceStore(db), sharedData('prices/nl-2024-hourly-local.csv'), 'NL', NOW, { exogenous })).toThrow(CsvImportError);
    expect(exogenous.coverage('NL').map((c) => c.points)).toEqual(before);
  });

  it('a backfill hole is one of the load or of a series the zone has around then, so a late wind forecast is fetched again', () => {
    const day = [Date.parse('2022-03-09T23:00Z'), Date.parse('2022-03-10T23:00Z')] as const;
    const month = [Date.parse('2022-02-28T23:00Z'), Date.parse('2022-03-31T22:00Z')] as const;
    expect(exogenousGapsIn(exogenous, 'NL', ...month)).toEqual([]);
    // The load of that day is there, its onshore wind forecast is not (yet).
    db.prepare("DELETE FROM exogenous_series WHERE market_area = 'NL' AND series = 'wind_onshore' AND start_ms >= ? AND start_ms < ?").run(...day);
    expect(exogenous.seriesGapsIn('NL', 'load', ...month)).toEqual([]);
    expect(exogenousGapsIn(exogenous, 'NL', ...month)).toEqual([{ fromMs: day[0], toMs: day[1] }]);
  });
});
