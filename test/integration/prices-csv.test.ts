// CSV import of the real files as they are, into a real SQLite file, checked against
// the facts in ../shared/data/README.md.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importPriceFile, type ImportResult } from '../../src/prices/import.js';
import { requireMarket } from '../../src/prices/markets.js';
import { CsvImportError } from '../../src/prices/sources/csv.js';
import { localDayStartMs } from '../../src/prices/timezone.js';
import { openDatabase, type Db } from '../../src/store/db.js';
import { PriceStore } from '../../src/store/prices.js';
import { pricesAtInterval } from '../../src/prices/at-interval.js';
import { hasSharedData, sharedData, SKIP_REASON } from '../helpers/shared-data.js';

const NOW = Date.UTC(2026, 0, 1);
const yearMs = (tz: string, y: number, endY = y + 1) => [localDayStartMs(tz, `${y}-01-01`), localDayStartMs(tz, `${endY}-01-01`)] as const;
const iso = (ms: number) => new Date(ms).toISOString();

describe.skipIf(!hasSharedData)(`CSV import of the real price files${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let dir: string;
  let db: Db;
  let store: PriceStore;
  const results: Record<string, ImportResult> = {};

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'mg-prices-csv-'));
    db = openDatabase(join(dir, 'metergate.db'));
    store = new PriceStore(db);
    for (const [file, region] of [
      ['nl-2015-2023h1-entsoe-hourly.csv', 'NL'],
      ['de-lu-2018-2023h1-entsoe-hourly.csv', 'DE-LU'],
      ['de-at-lu-2015-2018-entsoe-hourly.csv', 'DE-AT-LU'],
      ['nl-2024-hourly-local.csv', 'NL'],
      ['nl-2025-quarterhour-local-utc.csv', 'NL'],
    ]) {
      results[file] = importPriceFile(store, sharedData(`prices/${file}`), region, NOW);
    }
  });
  afterAll(() => {
    db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const prices = (area: string, [from, to]: readonly [number, number]) => store.native(area, from, to);

  it('NL history: 74,376 rows; forced 24-hour days reported, not stored as prices', () => {
    const r = results['nl-2015-2023h1-entsoe-hourly.csv'];
    expect(r.report.rows).toBe(74_376);
    expect(r.report.forced24HourDays).toHaveLength(17);
    expect(r.report.forced24HourDays).toContain('2022-10-30');
    // 9 spring rows (a repeat of 01:00) and 8 autumn rows (the mean of both 02:00 hours) are not prices.
    expect(r.report.dropped).toHaveLength(17);
    expect(r.written).toBe(74_376 - 17);
    expect(r.report.missing.map((g) => [iso(g.fromMs), (g.toMs - g.fromMs) / 3_600_000])).toContainEqual(['2022-10-30T00:00:00.000Z', 2]);
  });

  it('NL 2022: file mean 241.94, max 871.00 at 2022-08-29 19:00 local', () => {
    const r = results['nl-2015-2023h1-entsoe-hourly.csv'];
    const tz = requireMarket('NL').timeZone;
    const stored = prices('NL', yearMs(tz, 2022));
    const dropped = r.report.dropped.filter((d) => d.localTime.startsWith('2022-')).map((d) => d.pricePerMwh!);
    // The README's mean is over the file's 8,760 rows, the two forced rows included.
    const all = [...stored.map((p) => p.pricePerMwh), ...dropped];
    expect(all).toHaveLength(8760);
    expect(all.reduce((s, x) => s + x, 0) / all.length).toBeCloseTo(241.94, 2);
    const max = stored.reduce((a, b) => (b.pricePerMwh > a.pricePerMwh ? b : a));
    expect(max.pricePerMwh).toBe(871);
    expect(iso(max.startMs)).toBe('2022-08-29T17:00:00.000Z');
    const de = store.native('DE-LU', max.startMs, max.startMs + 1);
    expect(de[0].pricePerMwh).toBe(871);
  });

  it('NL 2023 H1 minimum -400', () => {
    const tz = requireMarket('NL').timeZone;
    const h1 = prices('NL', [localDayStartMs(tz, '2023-01-01'), localDayStartMs(tz, '2023-07-01')]);
    expect(Math.min(...h1.map((p) => p.pricePerMwh))).toBe(-400);
  });

  it('DE-LU 2019: 210 negative rows in the file = 209 stored hours + the negative autumn mean row', () => {
    const r = results['de-lu-2018-2023h1-entsoe-hourly.csv'];
    expect(r.report.emptyLines).toBe(240); // the README's 240 ",,,,,," lines
    const stored = prices('DE-LU', yearMs('Europe/Berlin', 2019)).filter((p) => p.pricePerMwh < 0).length;
    const droppedNegative = r.report.dropped.filter((d) => d.localTime.startsWith('2019-') && d.pricePerMwh! < 0);
    expect(droppedNegative.map((d) => [d.localTime, d.pricePerMwh])).toEqual([['2019-10-27 02:00', -19.97]]);
    expect(stored + droppedNegative.length).toBe(210);
  });

  it('DE-AT-LU history ends where DE-LU begins', () => {
    const r = results['de-at-lu-2015-2018-entsoe-hourly.csv'];
    expect(r.report.rows).toBe(32_760);
    expect(iso(r.report.lastEndMs!)).toBe('2018-09-30T22:00:00.000Z');
    expect(iso(results['de-lu-2018-2023h1-entsoe-hourly.csv'].report.firstStartMs!)).toBe('2018-09-30T22:00:00.000Z');
  });

  it('NL 2024: 465 negative hours, min -200 at 2024-05-01 13:00, max 872.96 at 2024-12-12 17:00; the ambiguous autumn 02:00 is reported', () => {
    const r = results['nl-2024-hourly-local.csv'];
    expect(r.report.rows).toBe(8783);
    expect(r.report.dropped.map((d) => d.localTime)).toEqual(['2024-10-27 02:00']);
    expect(r.report.missing.map((g) => [iso(g.fromMs), iso(g.toMs)])).toEqual([['2024-10-27T00:00:00.000Z', '2024-10-27T02:00:00.000Z']]);
    const year = prices('NL', yearMs('Europe/Amsterdam', 2024));
    // The dropped 02:00 row (82.2) is not negative, so the count is the file's.
    expect(year.filter((p) => p.pricePerMwh < 0)).toHaveLength(465);
    const min = year.reduce((a, b) => (b.pricePerMwh < a.pricePerMwh ? b : a));
    const max = year.reduce((a, b) => (b.pricePerMwh > a.pricePerMwh ? b : a));
    expect([min.pricePerMwh, iso(min.startMs)]).toEqual([-200, '2024-05-01T11:00:00.000Z']);
    expect([max.pricePerMwh, iso(max.startMs)]).toEqual([872.96, '2024-12-12T16:00:00.000Z']);
  });

  it('NL 2025: min -350 at 2025-05-11 13:00, max 523.47 at 2025-01-20 17:00; 15-minute periods from 2025-10-01; missing autumn hour and the left-out 2025-11-07 reported', () => {
    const r = results['nl-2025-quarterhour-local-utc.csv'];
    // The README's 34,940 rows: 365 local days of 96 quarter-hours (92 on 2025-03-30, 100 on
    // 2025-10-26), less the 4 rows of the missing autumn hour and the 96 rows of 2025-11-07.
    expect(r.report.rows).toBe(34_940);
    expect(r.report.missing.map((g) => [iso(g.fromMs), iso(g.toMs)])).toEqual([
      ['2025-10-26T01:00:00.000Z', '2025-10-26T02:00:00.000Z'],
      ['2025-11-06T23:00:00.000Z', '2025-11-07T23:00:00.000Z'],
    ]);
    const year = prices('NL', yearMs('Europe/Amsterdam', 2025));
    const min = year.reduce((a, b) => (b.pricePerMwh < a.pricePerMwh ? b : a));
    const max = year.reduce((a, b) => (b.pricePerMwh > a.pricePerMwh ? b : a));
    expect([min.pricePerMwh, iso(min.startMs)]).toEqual([-350, '2025-05-11T11:00:00.000Z']);
    expect([max.pricePerMwh, iso(max.startMs)]).toEqual([523.47, '2025-01-20T16:00:00.000Z']);
    const cov = store.coverage('NL');
    expect(cov.resolutions.map((s) => [s.durationS, iso(s.fromMs)])).toEqual([
      [3600, '2015-01-04T23:00:00.000Z'],
      [900, '2025-09-30T22:00:00.000Z'],
    ]);
  });

  it('queries a year at 900 s with local-day boundaries', () => {
    const [from, to] = yearMs('Europe/Amsterdam', 2024);
    const q = pricesAtInterval(store, 'NL', from, to, 900);
    // 8,784 hours in 2024, minus the 2 unknown autumn hours, times four.
    expect(q).toHaveLength((8784 - 2) * 4);
    const d = pricesAtInterval(store, 'NL', localDayStartMs('Europe/Amsterdam', '2024-03-31'), localDayStartMs('Europe/Amsterdam', '2024-04-01'), 3600);
    expect(d).toHaveLength(23);
    expect(store.hasPrices('NL')).toBe(true);
    expect(store.hasPrices('FR')).toBe(false);
  });

  it('is idempotent: a second import changes nothing', () => {
    const before = db.prepare('SELECT count(*) n, sum(price_per_mwh) s FROM prices').get();
    importPriceFile(store, sharedData('prices/nl-2024-hourly-local.csv'), 'NL', NOW + 1);
    expect(db.prepare('SELECT count(*) n, sum(price_per_mwh) s FROM prices').get()).toEqual(before);
  });

  it('keeps each price\'s source and fetch time; a re-import refreshes the fetch time, not the price', () => {
    const tz = requireMarket('NL').timeZone;
    const day = store.nativeWithProvenance('NL', localDayStartMs(tz, '2024-05-01'), localDayStartMs(tz, '2024-05-02'));
    expect(day).toHaveLength(24);
    // The idempotency test above imported the 2024 file again at NOW + 1.
    expect(new Set(day.map((p) => `${p.source} ${p.fetchedAtMs} ${p.currency}`))).toEqual(new Set([`csv:nl-2024-hourly-local.csv ${NOW + 1} EUR`]));
    expect(day.find((p) => p.startMs === Date.UTC(2024, 4, 1, 11))!.pricePerMwh).toBe(-200);
    const history = store.nativeWithProvenance('NL', Date.UTC(2022, 7, 29, 17), Date.UTC(2022, 7, 29, 18));
    expect(history).toEqual([expect.objectContaining({ source: 'csv:nl-2015-2023h1-entsoe-hourly.csv', fetchedAtMs: NOW, pricePerMwh: 871 })]);
  });

  it('a bad row names its line and nothing of the file is imported', () => {
    const lines = readFileSync(sharedData('prices/nl-2024-hourly-local.csv'), 'utf8').split('\n');
    lines[5000] = lines[5000].replace(/;.*/, ';abc');
    const bad = join(dir, 'bad.csv');
    writeFileSync(bad, lines.join('\n'));
    const fresh = new PriceStore(openDatabase(join(dir, 'fresh.db')));
    expect(() => importPriceFile(fresh, bad, 'NL', NOW)).toThrow(CsvImportError);
    expect(() => importPriceFile(fresh, bad, 'NL', NOW)).toThrow(/^line 5001: prijs_excl_belastingen "abc" is not a number/);
    expect(fresh.hasPrices('NL')).toBe(false);
  });

  it('generic layout as documented: start with offset or Z, or start_utc; EUR/MWh or EUR/kWh; rows of real NL prices across the 15-minute switch and the autumn gap', () => {
    const nl = requireMarket('NL');
    const real = prices('NL', [localDayStartMs(nl.timeZone, '2025-09-29'), localDayStartMs(nl.timeZone, '2025-10-03')]).concat(
      prices('NL', [localDayStartMs(nl.timeZone, '2025-10-26'), localDayStartMs(nl.timeZone, '2025-10-27')]),
    );
    expect(new Set(real.map((p) => p.durationS))).toEqual(new Set([3600, 900]));
    // Any offset will do: +05:30 is nobody's local time here.
    const shifted = (ms: number) => `${new Date(ms + 5.5 * 3_600_000).toISOString().slice(0, 19)}+05:30`;
    const files: Record<string, string> = {
      'offset-mwh.csv': ['start,price_per_mwh', ...real.map((p) => `${shifted(p.startMs)},${p.pricePerMwh}`)].join('\n'),
      'z-mwh-duration.csv': ['start,price_per_mwh,duration_s', ...real.map((p) => `${new Date(p.startMs).toISOString()},${p.pricePerMwh},${p.durationS}`)].join('\n'),
      'utc-kwh-semicolon.csv': ['start_utc;price_per_kwh', ...real.map((p) => `${new Date(p.startMs).toISOString().slice(0, 16).replace('T', ' ')};${String(p.pricePerMwh / 1000).replace('.', ',')}`)].join('\n'),
    };
    for (const [name, text] of Object.entries(files)) {
      const file = join(dir, name);
      writeFileSync(file, `${text}\n`);
      const fresh = new PriceStore(openDatabase(join(dir, `generic-${name}.db`)));
      const r = importPriceFile(fresh, file, 'NL', NOW);
      expect(r.report.layout, name).toBe('generic');
      expect(fresh.native('NL', real[0].startMs, real[real.length - 1].startMs + 1), name).toEqual(real);
    }
  });

  it('generic layout: an impossible time is a bad row with its line number, never moved to another day', () => {
    const fresh = new PriceStore(openDatabase(join(dir, 'generic-bad.db')));
    for (const bad of ['2025-04-31T00:00:00+02:00', '2025-01-01T24:00:00Z', '2025-02-29T12:00:00Z', '2025-01-01T00:00:00+24:00', '2025-01-01T00:00:00']) {
      const file = join(dir, 'generic-bad.csv');
      writeFileSync(file, ['start,price_per_mwh', '2025-01-01T00:00:00+01:00,100.5', `${bad},99`, ''].join('\n'));
      expect(() => importPriceFile(fresh, file, 'NL', NOW), bad).toThrow(/^line 3: start "/);
    }
    expect(fresh.hasPrices('NL')).toBe(false);
  });

  it('CLI: import without --region takes the one configured region; status marks every region that is not configured (issue 31 point 7)', () => {
    const dataDir = join(dir, 'one-region');
    const config = join(dir, 'one-region.yaml');
    writeFileSync(config, ['organization_id: 3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11', `data_dir: ${dataDir}`, 'prices:', '  source: none', '  regions: [NL]', ''].join('\n'));
    // The first day of the real NL file, as it is.
    const day = join(dir, 'nl-first-day.csv');
    writeFileSync(day, `${readFileSync(sharedData('prices/nl-2025-quarterhour-local-utc.csv'), 'utf8').split('\n').slice(0, 97).join('\n')}\n`);
    const cli = (...args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { encoding: 'utf8' });
    const imported = cli('prices', 'import', day, '-c', config);
    expect(imported.status, imported.stderr).toBe(0);
    expect(imported.stderr).toContain('importing as NL (the one region in prices.regions; --region to choose another)');
    expect(imported.stdout).toMatch(/96 rows \(nl-eur-kwh\), 24 periods stored/);
    // Another region by name: stored, but not configured.
    expect(cli('prices', 'import', day, '--region', 'BE', '-c', config).status).toBe(0);
    const status = cli('prices', 'status', '-c', config).stdout;
    const headers = status.split('\n').filter((l) => /^[A-Z]/.test(l) && !l.startsWith('price sync is off'));
    expect(headers[0]).toMatch(/^NL: 24 periods, first 2024-12-31T23:00Z/);
    expect(headers).toContain("DE-LU (not in prices.regions: load, solar and wind forecasts for NL's forecaster): no prices (none needed)");
    expect(headers.find((h) => h.startsWith('BE'))).toMatch(/^BE \(not in prices\.regions: stored here, not synced\): 24 periods/);
    for (const h of headers.slice(1)) expect(h).toContain('(not in prices.regions');
    const json = JSON.parse(cli('prices', 'status', '-c', config, '--json').stdout) as Array<{ marketArea: string; configured: boolean; exogenousFor?: string[] }>;
    expect(json.map((c) => [c.marketArea, c.configured, c.exogenousFor])).toEqual([['NL', true, undefined], ['DE-LU', false, ['NL']], ['BE', false, undefined]]);

    // Two regions configured: which one a file is for is not guessed.
    writeFileSync(config, ['organization_id: 3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11', `data_dir: ${dataDir}`, 'prices:', '  source: none', '  regions: [NL, BE]', ''].join('\n'));
    const two = cli('prices', 'import', day, '-c', config);
    expect(two.status).toBe(1);
    expect(two.stderr).toBe('metergate prices import: give --region: prices.regions has 2 regions (NL, BE), so which one this file is for is not known\n');
  });

  it('CLI: prices import and prices status', () => {
    const dbFile = join(dir, 'cli.db');
    const run = (...args: string[]) => execFileSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { encoding: 'utf8' });
    const out = run('prices', 'import', sharedData('prices/nl-2025-quarterhour-local-utc.csv'), '--region', 'NL', '--db', dbFile);
    // 34,940 rows: 6,551 hours until 2025-09-30 (2025-03-30 has 23) as 26,204 quarter-hour rows
    // stored as 6,551 hourly periods, then 8,736 quarter-hours (92 days x 96 + 4 - 4 for the
    // missing autumn hour - 96 for 2025-11-07).
    expect(out).toMatch(/34940 rows \(nl-eur-kwh\), 15287 periods stored/);
    expect(out).toMatch(/no price 2025-10-26T01:00Z \.\. 2025-10-26T02:00Z \(1 h\)/);
    expect(out).toMatch(/no price 2025-11-06T23:00Z \.\. 2025-11-07T23:00Z \(24 h\)/);
    const status = run('prices', 'status', '--db', dbFile);
    expect(status).toMatch(/^NL: 15287 periods, first 2024-12-31T23:00Z/);
    expect(status).toMatch(/resolution 15 min: 2025-09-30T22:00Z \.\. 2025-12-31T23:00Z/);
    expect(status).toMatch(/gaps: 2 \(25 h in all\)\n\s+2025-10-26T01:00Z \.\. 2025-10-26T02:00Z  1 h\n\s+2025-11-06T23:00Z \.\. 2025-11-07T23:00Z  24 h/);
  });
});
