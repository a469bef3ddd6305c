// Regression guard for the price forecaster (issue 24 point 5): runs the standard
// evaluations of docs/forecast-evaluation.md with this checkout's build and prints, per
// horizon, rMAE and CRPS next to the previous release's figures, kept in the repository
// as data (scripts/bench/forecast-release-figures.json), and calls out a horizon that got
// worse by more than its noise.
//
//   npx tsx scripts/bench/forecast-regression.ts                 (builds first; needs ../shared/data)
//   npx tsx scripts/bench/forecast-regression.ts --only nl-2025-3600,nl-q4-900
//   ... --release-forecasts   also run the release's own build (git archive of its commit)
//                             for its point forecasts, once, kept in the work directory
//   ... --update              after a release: the figures file takes this run's figures and
//                             this run's forecasts become the release's; with --only, the
//                             evaluations run carry this commit of their own (the others keep theirs)
//   ... --from DIR [--commit SHA]  take each evaluation's figures from DIR/NAME/*.json (and its
//                             forecasts from DIR/NAME/forecasts.csv), written by `forecast eval`
//                             with the evaluation's arguments by the build of SHA (default HEAD),
//                             instead of running it: a long evaluation is run once, by hand
//
// Noise, per horizon: with the release's forecasts at hand (work directory), the
// Diebold-Mariano test on the daily mean absolute errors, paired day by day (Newey-West
// variance, lag h - 1): worse = DM statistic > 0 at p < 0.05. Without them, and always for
// CRPS: the moving-block bootstrap standard errors (7-day blocks) of both runs' figures,
// worse = the difference exceeds 2 sqrt(se_release^2 + se_now^2) (unpaired, so it only
// catches large slips). Exit code 2 when a horizon got worse, so a commit can quote it.
//
// CRPS is the shipped quantiles' (the band's method per horizon, src/forecast/band-methods.json).
// Each figure records its method (`band`); where this run ships another method than the
// release did, the row says so ("conformal -> average") and also prints this run's CRPS of
// the conformal quantiles (the conformal candidate), so a drop from a change of method is
// shown as such, beside what the model itself did like for like.
// Evaluations take minutes each (about 45 s of CPU for NL 2025 hourly, 150 s for DE-LU
// 2019-23, more with exogenous inputs): a benchmark, not a test.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildBaselineDist, buildDist, repoRoot } from './dist.js';
import { shippedBandMethods } from '../../src/forecast/band-methods.js';

interface HorizonFigures {
  readonly horizon: number;
  readonly rmae: number;
  readonly rmaeSe: number;
  readonly crps: number;
  readonly crpsSe: number;
  /** The band's method the CRPS is of (band-methods.ts); absent in figures written before it: conformal. */
  readonly band?: string;
  /** Coverage (%) of the shipped band at the configured 80 %. */
  readonly coverage80?: number;
}

interface EvaluationSpec {
  readonly name: string;
  /** History files (under ../shared/data/prices) imported into the named scratch database. */
  readonly imports: readonly { readonly file: string; readonly region: string; readonly db: string }[];
  /** `metergate forecast eval` arguments; `{db}` and `{data}` are replaced. */
  readonly args: readonly string[];
  readonly db: string;
  /** The build whose figures these are, when not the file's `commit` (set by --update --only). */
  readonly commit?: string;
  readonly horizons: readonly HorizonFigures[];
}

interface ReleaseFigures {
  readonly release: string;
  readonly commit: string;
  readonly note: string;
  readonly evaluations: readonly EvaluationSpec[];
}

interface ScorecardJson {
  horizon: number;
  crps: number;
  rmaeSe: number;
  crpsSe: number;
  bands: readonly { nominal: number; coverage: number }[];
  dmPrevious?: { statistic: number; pValue: number };
}

interface EvalJson {
  readonly market: string;
  readonly interval_s: number;
  readonly from: string;
  readonly to: string;
  readonly exogenous: boolean;
  readonly horizons: readonly { horizon: number; rmae: number }[];
  readonly scorecard: readonly ScorecardJson[];
  /** Written since the band became per-horizon data; older builds (a release's) lack them. */
  readonly band_methods?: readonly { horizon: number; method: string }[];
  readonly candidate_scorecards?: { readonly conformal?: readonly ScorecardJson[] };
}

const argv = process.argv.slice(2);
const only = argv.includes('--only') ? argv[argv.indexOf('--only') + 1].split(',') : undefined;
const update = argv.includes('--update');
const withReleaseForecasts = argv.includes('--release-forecasts');
const fromDir = argv.includes('--from') ? resolve(argv[argv.indexOf('--from') + 1]) : undefined;
const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' }).stdout.trim();
const runCommit = argv.includes('--commit') ? argv[argv.indexOf('--commit') + 1] : head;
if (!fromDir && argv.includes('--commit')) throw new Error('--commit names the build of --from DIR; without --from the figures are this checkout\'s');
// --figures FILE: another figures file (e.g. a short evaluation to try the guard itself).
const figuresPath = argv.includes('--figures') ? resolve(argv[argv.indexOf('--figures') + 1]) : join(repoRoot, 'scripts/bench/forecast-release-figures.json');
const dataDir = resolve(repoRoot, '../shared/data');
const work = join(repoRoot, 'bench-results/forecast-regression');
mkdirSync(work, { recursive: true });

const figures = JSON.parse(readFileSync(figuresPath, 'utf8')) as ReleaseFigures;
const evaluations = figures.evaluations.filter((e) => !only || only.includes(e.name));
if (evaluations.length === 0) throw new Error(`no evaluation named ${only?.join(', ')} in ${figuresPath}`);

if (!fromDir) buildDist();
const cli = join(repoRoot, 'dist/cli.js');

function run(dist: string, args: readonly string[]): void {
  const r = spawnSync('node', [dist, ...args], { cwd: repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`node ${dist} ${args.join(' ')} exited ${r.status}`);
}

// Scratch databases from the shared history files, once (kept in the work directory).
for (const spec of fromDir ? [] : evaluations)
  for (const imp of spec.imports) {
    const db = join(work, imp.db);
    const marker = `${db}.${imp.file}.imported`;
    if (existsSync(marker)) continue;
    run(cli, ['prices', 'import', join(dataDir, 'prices', imp.file), '--region', imp.region, '--db', db]);
    writeFileSync(marker, '');
  }

const argsOf = (spec: EvaluationSpec): string[] => spec.args.map((a) => a.replaceAll('{db}', join(work, spec.db)).replaceAll('{data}', dataDir));

function evaluate(dist: string, spec: EvaluationSpec, forecastsOut: string, previous?: string): EvalJson {
  const out = join(work, `${spec.name}-out`);
  mkdirSync(out, { recursive: true });
  run(dist, ['forecast', 'eval', ...argsOf(spec), '--out', out, '--forecasts-out', forecastsOut, ...(previous ? ['--previous', previous] : [])]);
  const json = readdirSync(out).find((f) => f.endsWith('.json'));
  if (!json) throw new Error(`no JSON written to ${out}`);
  return JSON.parse(readFileSync(join(out, json), 'utf8')) as EvalJson;
}

/** A run written by `forecast eval` by hand (--from DIR): checked against the evaluation's arguments. */
function fromOut(spec: EvaluationSpec, forecastsOut: string): EvalJson {
  const dir = join(fromDir ?? '', spec.name);
  const jsons = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.json')) : [];
  if (jsons.length !== 1) throw new Error(`--from: expected one forecast eval JSON in ${dir}, found ${jsons.length}`);
  const result = JSON.parse(readFileSync(join(dir, jsons[0]), 'utf8')) as EvalJson;
  const args = argsOf(spec);
  const arg = (name: string, fallback: string): string => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
  const expected = { market: arg('--region', ''), interval_s: Number(arg('--interval', '3600')), from: arg('--from', ''), to: arg('--to', ''), exogenous: args.includes('--exogenous') };
  const got = { market: result.market, interval_s: result.interval_s, from: result.from, to: result.to, exogenous: result.exogenous };
  if (JSON.stringify(expected) !== JSON.stringify(got)) throw new Error(`--from: ${join(dir, jsons[0])} is ${JSON.stringify(got)}, evaluation ${spec.name} is ${JSON.stringify(expected)}`);
  if (existsSync(join(dir, 'forecasts.csv'))) copyFileSync(join(dir, 'forecasts.csv'), forecastsOut);
  return result;
}

const releaseCommit = (spec: EvaluationSpec): string => spec.commit ?? figures.commit;
const releaseForecasts = (spec: EvaluationSpec): string => join(work, `${spec.name}.release-${releaseCommit(spec)}.csv`);
if (withReleaseForecasts)
  for (const spec of evaluations) if (!existsSync(releaseForecasts(spec))) evaluate(join(buildBaselineDist(releaseCommit(spec)), 'cli.js'), spec, releaseForecasts(spec));

let worse = 0;
const updated: EvaluationSpec[] = [];
process.stdout.write(`release: ${figures.release} (${figures.commit})${fromDir ? `; now: ${fromDir} (build ${runCommit})` : ''}; noise: DM vs the release's forecasts where kept, else 2 x bootstrap SE of the difference\n\n`);
process.stdout.write('| evaluation | day | rMAE release | rMAE now | diff | noise | DM vs release (p) | band release -> now | CRPS release | CRPS now | diff | noise | CRPS now, conformal | 80 % cov. now | verdict |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n');
let methodChanges = 0;
const { rule } = shippedBandMethods();
for (const spec of evaluations) {
  const previous = existsSync(releaseForecasts(spec)) ? releaseForecasts(spec) : undefined;
  const result = fromDir ? fromOut(spec, join(work, `${spec.name}.now.csv`)) : evaluate(cli, spec, join(work, `${spec.name}.now.csv`), previous);
  const now: HorizonFigures[] = result.scorecard.map((s) => ({
    horizon: s.horizon,
    rmae: result.horizons.find((h) => h.horizon === s.horizon)?.rmae ?? NaN,
    rmaeSe: s.rmaeSe,
    crps: s.crps,
    crpsSe: s.crpsSe,
    band: result.band_methods?.find((b) => b.horizon === s.horizon)?.method ?? 'conformal',
    coverage80: 100 * (s.bands.find((b) => Math.abs(b.nominal - 0.8) < 1e-9)?.coverage ?? NaN),
  }));
  updated.push({ ...spec, horizons: now });
  for (const n of now) {
    const r = spec.horizons.find((h) => h.horizon === n.horizon);
    const dm = result.scorecard.find((s) => s.horizon === n.horizon)?.dmPrevious;
    const rmaeNoise = r ? 2 * Math.hypot(r.rmaeSe, n.rmaeSe) : NaN;
    const crpsNoise = r ? 2 * Math.hypot(r.crpsSe, n.crpsSe) : NaN;
    const rmaeWorse = r ? (dm ? dm.statistic > 0 && dm.pValue < 0.05 : n.rmae - r.rmae > rmaeNoise) : false;
    const crpsWorse = r ? n.crps - r.crps > crpsNoise : false;
    const releaseBand = r?.band ?? 'conformal';
    const bandChanged = r !== undefined && releaseBand !== n.band;
    if (bandChanged) methodChanges++;
    const conformalNow = result.candidate_scorecards?.conformal?.find((c) => c.horizon === n.horizon)?.crps;
    const verdict = [
      !r ? 'new' : rmaeWorse || crpsWorse ? `WORSE (${[rmaeWorse ? 'rMAE' : '', crpsWorse ? 'CRPS' : ''].filter(Boolean).join(', ')})` : 'within noise or better',
      ...(bandChanged ? [`band method changed: CRPS ${releaseBand} -> ${n.band}`] : []),
      // An adopted (non-conformal) band whose coverage left the rule's range: its entry in band-methods.json needs re-measuring.
      ...(n.band !== 'conformal' && n.coverage80 !== undefined && (n.coverage80 < rule.coverage_min_pct || n.coverage80 > rule.coverage_max_pct) ? [`${n.band} band covers ${n.coverage80.toFixed(1)} %, outside ${rule.coverage_min_pct}-${rule.coverage_max_pct} %`] : []),
    ].join('; ');
    if (rmaeWorse || crpsWorse) worse++;
    const f = (x: number | undefined, d: number) => (x === undefined || Number.isNaN(x) ? '-' : x.toFixed(d));
    process.stdout.write(
      `| ${spec.name} | D+${n.horizon} | ${f(r?.rmae, 3)} | ${f(n.rmae, 3)} | ${r ? (n.rmae - r.rmae >= 0 ? '+' : '') + f(n.rmae - r.rmae, 3) : '-'} | ${f(rmaeNoise, 3)} | ${dm ? `${dm.statistic.toFixed(1)} (${dm.pValue.toFixed(3)})` : '-'} | ${r ? `${releaseBand} -> ${n.band}` : n.band} | ${f(r?.crps, 2)} | ${f(n.crps, 2)} | ${r ? (n.crps - r.crps >= 0 ? '+' : '') + f(n.crps - r.crps, 2) : '-'} | ${f(crpsNoise, 2)} | ${f(conformalNow, 2)} | ${f(n.coverage80, 1)} | ${verdict} |\n`,
    );
  }
}
process.stdout.write(`\n${worse === 0 ? 'no horizon worse than its noise' : `${worse} horizon(s) worse than their noise: say so in the commit`}\n`);
if (methodChanges > 0)
  process.stdout.write(
    `${methodChanges} horizon(s) ship another band method than the release (src/forecast/band-methods.json): their CRPS difference is the change of method plus the model's; "CRPS now, conformal" is this run's conformal quantiles, like for like with a conformal release\n`,
  );
if (update) {
  // All evaluations run: the file is this commit's release. Only some (--only): those carry
  // this commit of their own and the file's release stays what it was for the others.
  const all = updated.length === figures.evaluations.length;
  const kept = figures.evaluations.map((e) => {
    const u = updated.find((x) => x.name === e.name);
    if (!u) return e;
    const { commit: _old, ...rest } = u;
    return all ? rest : { ...rest, commit: runCommit };
  });
  const top = all ? { commit: runCommit, release: `main ${runCommit} (${new Date().toISOString().slice(0, 10)})` } : {};
  writeFileSync(figuresPath, `${JSON.stringify({ ...figures, ...top, evaluations: kept }, null, 2)}\n`);
  for (const spec of evaluations) {
    const now = join(work, `${spec.name}.now.csv`);
    if (existsSync(now)) renameSync(now, join(work, `${spec.name}.release-${runCommit}.csv`));
  }
  process.stdout.write(`updated ${figuresPath}: ${evaluations.map((e) => e.name).join(', ')} are the figures of ${runCommit}\n`);
}
process.exitCode = worse > 0 ? 2 : 0;
