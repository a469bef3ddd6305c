// metergate forecast eval: the rolling-origin backtest of the forecaster on the prices in
// the gateway's store (import history first with `metergate prices import`).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { validateConfig } from '../config/load.js';
import type { Command } from 'commander';
import type { SeriesPoint } from '../forecast/day-matrix.js';
import { evaluateRolling, formatEvaluationTable, formatVariantTable, pointKey } from '../forecast/evaluate.js';
import { formatScorecard } from '../forecast/scorecard.js';
import { dayFromIso, isoDate, localMidnightMs } from '../forecast/local-days.js';
import { historyDaysNeeded } from '../forecast/market-forecast.js';
import { rollingOptions } from '../forecast/service.js';
import { bandMethodsFor, describeBandMethods, shippedBandMethods } from '../forecast/band-methods.js';
import { forecastPlotSvg } from '../forecast/svg-plot.js';
import { marketByCode, type Market } from '../prices/markets.js';
import { databasePath, openDatabase } from '../store/db.js';
import { PriceStore } from '../store/prices.js';
import { DEFAULT_CONFIG_PATH, loadConfigOrExit } from './config.js';
import { exogenousFromHistory } from '../prices/exogenous/csv.js';
import { parsePriceCsv } from '../prices/sources/csv.js';

interface EvalOptions {
  region: string;
  from: string;
  to: string;
  interval: string;
  exogenous?: string;
  neighbourExogenous: string[];
  config: string;
  db?: string;
  out: string;
  windowDays?: string;
  previous?: string;
  forecastsOut?: string;
}

export function registerForecastCommands(program: Command): void {
  const forecast = program.command('forecast').description('Day-ahead price forecasts');
  forecast
    .command('eval')
    .description('Rolling-origin backtest: a forecast every day at 10:00 market time for the next 7 days, scored per horizon day')
    .requiredOption('--region <code>', 'market area, e.g. NL')
    .requiredOption('--from <date>', 'first target day scored (YYYY-MM-DD)')
    .requiredOption('--to <date>', 'last target day scored (YYYY-MM-DD)')
    .option('--interval <s>', 'period length evaluated: 3600 or 900', '3600')
    .option('--exogenous <csv>', 'ENTSO-E history file whose day-ahead load, solar and wind forecasts (Load_DA, Sol_DA, Won_DA, Woff_DA) are used as inputs')
    .option(
      '--neighbour-exogenous <region=csv>',
      "a coupled neighbour's ENTSO-E history file (e.g. DE-LU=../shared/data/prices/de-lu-2018-2023h1-entsoe-hourly.csv) whose day-ahead load, solar and wind forecasts are inputs too (repeatable; with --exogenous)",
      (v: string, acc: string[]) => [...acc, v],
      [] as string[],
    )
    .option('--window-days <n>', 'training window (default: config forecast.training_window_days)')
    .option('--forecasts-out <csv>', 'also write every scored point forecast (day,horizon,slot,forecast): the release\'s forecasts for a later --previous')
    .option('--previous <csv>', 'a previous release\'s forecasts (written by --forecasts-out) to test against (Diebold-Mariano)')
    .option('-c, --config <file>', 'config file', DEFAULT_CONFIG_PATH)
    .option('--db <file>', 'SQLite database to read instead of the configured one')
    .option('--out <dir>', 'where to write the JSON figures and the SVG plot', '.')
    .action((opts: EvalOptions) => {
      // With --db and no config file, the forecaster runs on the configuration defaults.
      const config =
        opts.db && !existsSync(opts.config)
          ? validateConfig({ organization_id: '00000000-0000-4000-8000-000000000000', data_dir: dirname(opts.db) }, 'defaults', {})
          : loadConfigOrExit(opts.config);
      const market = marketByCode(opts.region);
      if (!market) fail(`unknown market area ${opts.region}`);
      const intervalS = Number(opts.interval);
      if (intervalS !== 3600 && intervalS !== 900) fail('--interval must be 3600 or 900');
      const fromDay = dayFromIso(opts.from);
      const toDay = dayFromIso(opts.to);
      if (toDay < fromDay) fail('--to is before --from');
      const base = rollingOptions(config);
      const options = {
        ...base,
        ...(opts.windowDays ? { trainingWindowDays: Number(opts.windowDays) } : {}),
        // The band the live service ships for this market and resolution (band-methods.json),
        // so the shipped scorecard is what the service does; the others are candidates.
        bandMethods: bandMethodsFor(shippedBandMethods(), market.code, intervalS, base.coverage, base.horizonDays),
      };
      const db = openDatabase(opts.db ?? databasePath(config.data_dir));
      try {
        const historyFrom = localMidnightMs(market.timeZone, fromDay - historyDaysNeeded(options) - options.horizonDays - 10);
        const historyTo = localMidnightMs(market.timeZone, toDay + 1);
        const store = new PriceStore(db);
        const prices: SeriesPoint[] = store
          .native(market.code, historyFrom, historyTo)
          .map((p) => ({ startMs: p.startMs, durationS: p.durationS, value: p.pricePerMwh }));
        if (prices.length === 0) fail(`no prices stored for ${market.code}; import them first (metergate prices import)`);
        // The history files are read through the project's CSV importer, with the rules of
        // `prices import --exogenous` (a zero load or an all-zero day is missing) and the
        // names the live service gives the stored series ('load', 'DE-LU load', ...).
        const historySeries = (file: string, area: Market, prefix: string): Record<string, SeriesPoint[]> => {
          const { points } = exogenousFromHistory(parsePriceCsv(readFileSync(file, 'utf8'), area).history ?? [], area.code, area.timeZone);
          const out: Record<string, SeriesPoint[]> = {};
          for (const p of points) (out[prefix + p.series] ??= []).push({ startMs: p.startMs, durationS: p.durationS, value: p.valueMw });
          if (Object.keys(out).length === 0) fail(`${file} has no Load_DA, Sol_DA, Won_DA or Woff_DA column with values`);
          return out;
        };
        if (opts.neighbourExogenous.length > 0 && !opts.exogenous) fail('--neighbour-exogenous needs --exogenous (the region\'s own series)');
        const exogenous = opts.exogenous
          ? Object.assign(
              historySeries(opts.exogenous, market, ''),
              ...opts.neighbourExogenous.map((arg) => {
                const [code, file] = arg.split(/=(.*)/s);
                const area = marketByCode(code);
                if (!area || !file) fail(`--neighbour-exogenous ${arg}: expected REGION=FILE with a known market area`);
                return historySeries(file, area, `${area.code} `);
              }),
            )
          : undefined;
        const previous = opts.previous ? readPointForecasts(opts.previous) : undefined;
        const started = Date.now();
        let lastReport = 0;
        const result = evaluateRolling(
          { timeZone: market.timeZone, prices, exogenous, fromDay, toDay, slots: intervalS === 900 ? 96 : 24, options, probabilistic: true, ...(previous ? { previous } : {}) },
          (_day, done, total) => {
            if (Date.now() - lastReport > 5000) {
              lastReport = Date.now();
              process.stderr.write(`origin ${done}/${total}\n`);
            }
          },
        );
        const seconds = (Date.now() - started) / 1000;
        // Which horizons had inputs (issue 24 point 4): the history files hold the day-ahead
        // load, wind and solar forecasts only, read for D+1 (exogenousLeadDays); no week-ahead
        // forecast is recorded, so D+2.. are price only here, whatever the live service has.
        const inputsByHorizon = Array.from({ length: options.horizonDays }, (_, i) =>
          exogenous && i + 1 <= options.exogenousLeadDays ? `prices + ${Object.keys(exogenous).join(', ')}` : `prices only${exogenous ? ' (no week-ahead inputs in the recorded data)' : ''}`,
        );
        const label = `${market.code} ${intervalS} s, ${opts.from}..${opts.to}${opts.exogenous ? `, with exogenous inputs${opts.neighbourExogenous.length > 0 ? ' and its neighbours\'' : ''}` : ', price only'}`;
        process.stdout.write(`${label}; ${result.origins} origins at 10:00 local; window ${options.trainingWindowDays} d; ${seconds.toFixed(0)} s\n`);
        process.stdout.write(`inputs: ${inputsByHorizon.map((x, i) => `D+${i + 1} ${x}`).join('; ')}\n`);
        process.stdout.write(`${formatEvaluationTable(result.rows, options.horizonDays, result.methods)}\n`);
        if (result.variants) {
          process.stdout.write(`\nshipped (per-horizon blend of direct and recursive, share chosen on calibration errors) vs recursive (day-ahead model fed its own forecasts) vs direct (per-horizon models):\n`);
          process.stdout.write(`${formatVariantTable(result.variants)}\n`);
        }
        const fellBack = result.bandMethods.filter((b) => b.conformalFallback > 0);
        process.stdout.write(`\nband and quantiles shipped (src/forecast/band-methods.json for ${market.code} ${intervalS} s at ${Math.round(100 * options.coverage)} %): ${describeBandMethods(options.bandMethods)}${fellBack.length > 0 ? ` (conformal while too few calibration pairs: ${fellBack.map((b) => `D+${b.horizon} ${b.conformalFallback}/${b.days} days`).join(', ')})` : ''}\n`);
        process.stdout.write(`as a distribution, shipped (quantiles 1..99 % of the band's method per horizon, above: conformal = from the conformal scores, average = mean of those and the IDR quantiles; CRPS from them; bands from the quantiles; p-values: Kupiec unconditional, Christoffersen conditional on the points in time order, slots ok = slots whose daily sequence passes Christoffersen at 5 %; DM on daily mean absolute errors, negative = this forecast better${previous ? `, previous = ${opts.previous}` : ''}):\n`);
        process.stdout.write(`${formatScorecard(result.scorecard, new Map(result.rows.map((r) => [r.horizon, r])))}\n`);
        for (const [name, rows] of Object.entries(result.candidateScorecards)) {
          process.stdout.write(`\ncandidate quantiles: ${CANDIDATE_NAMES[name as keyof typeof CANDIDATE_NAMES]}:\n`);
          process.stdout.write(`${formatScorecard(rows, new Map(result.rows.map((r) => [r.horizon, r])))}\n`);
        }
        if (result.withinHour) {
          process.stdout.write(`\nwithin the hour (quarter-hours): MAE of the hourly means, of the within-hour profile (each quarter-hour's deviation from its hour's mean), and of a flat profile (the hourly forecast repeated):\n| day | hours | hourly-mean MAE | profile MAE | flat-profile MAE | profile vs flat |\n|---|---|---|---|---|---|\n`);
          for (const w of result.withinHour) process.stdout.write(`| D+${w.horizon} | ${w.hours} | ${w.hourlyMae.toFixed(2)} | ${w.profileMae.toFixed(2)} | ${w.flatProfileMae.toFixed(2)} | ${(w.profileMae / w.flatProfileMae).toFixed(3)} |\n`);
        }
        if (result.scorecardExcluded > 0) process.stdout.write(`scorecard excluded: ${result.scorecardExcluded} point(s) whose naive or a quantile was not a number\n`);
        if (opts.forecastsOut) {
          mkdirSync(dirname(opts.forecastsOut), { recursive: true });
          writeFileSync(opts.forecastsOut, `day,horizon,slot,forecast\n${result.pointForecasts.map((p) => `${isoDate(p.day)},${p.horizon},${p.slot},${p.forecast}`).join('\n')}\n`);
        }
        mkdirSync(opts.out, { recursive: true });
        const base = `forecast-eval-${market.code}-${intervalS}-${opts.from}-${opts.to}${opts.exogenous ? '-exo' : ''}`;
        writeFileSync(
          join(opts.out, `${base}.json`),
          `${JSON.stringify({ market: market.code, interval_s: intervalS, from: opts.from, to: opts.to, exogenous: !!opts.exogenous, exogenous_series: Object.keys(exogenous ?? {}), inputs_by_horizon: Object.fromEntries(inputsByHorizon.map((x, i) => [`D+${i + 1}`, x])), options, origins: result.origins, seconds, methods: result.methods, band_methods: result.bandMethods, horizons: result.rows, scorecard: result.scorecard, candidate_scorecards: result.candidateScorecards, ...(result.withinHour ? { within_hour: result.withinHour } : {}), ...(result.variants ? { variants: result.variants } : {}) }, null, 2)}\n`,
        );
        writeFileSync(join(opts.out, `${base}.svg`), forecastPlotSvg(label, result.dayAhead));
        process.stderr.write(`wrote ${join(opts.out, base)}.json and .svg (first target ${isoDate(fromDay)})\n`);
      } finally {
        db.close();
      }
    });
}

/** A release's forecasts as written by --forecasts-out, keyed as evaluateRolling's `previous`. */
function readPointForecasts(file: string): Map<string, number> {
  const out = new Map<string, number>();
  const lines = readFileSync(file, 'utf8').trim().split('\n');
  if (lines[0] !== 'day,horizon,slot,forecast') fail(`${file}: expected the header day,horizon,slot,forecast (written by --forecasts-out)`);
  for (const [i, line] of lines.slice(1).entries()) {
    const [day, horizon, slot, forecast] = line.split(',');
    const value = Number(forecast);
    if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || !Number.isInteger(Number(horizon)) || !Number.isInteger(Number(slot)) || !Number.isFinite(value)) fail(`${file} line ${i + 2}: not day,horizon,slot,forecast`);
    out.set(pointKey(dayFromIso(day), Number(horizon), Number(slot)), value);
  }
  return out;
}

const CANDIDATE_NAMES = {
  conformal: 'conformal (the split-conformal scores with ACI; the band before issue 24, and where no other method is adopted)',
  idr: 'isotonic distributional regression (IDR) of the price on the forecast (same calibration origins)',
  average: 'average of the IDR and the conformal quantiles',
  idrAci: 'IDR with the conformal correction (its levels warped by its own band\'s ACI level)',
  averageAci: 'average of the corrected IDR and the conformal quantiles',
} as const;

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(64);
}
