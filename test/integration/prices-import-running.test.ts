// `metergate prices import` while `metergate run` runs: the daemon uses the prices at once
// (prices/import-watch.ts), without a restart and without waiting for the forecaster's
// hourly run. Real recorded NL prices (the demo's, moved onto today), a real daemon process,
// the real CLI in another process on the same SQLite file, HTTP for what the daemon shows.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { moveRecording, recordedDays, shiftOntoToday } from '../../src/demo/recorded-prices.js';
import { DEMO_PRICES_URL } from '../../src/demo/demo-prices.js';
import { localDayOf } from '../../src/forecast/local-days.js';
import { freePort } from '../../src/free-port.js';
import { requireMarket } from '../../src/prices/markets.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';
import { databasePath, openDatabase } from '../../src/store/db.js';
import { TokenStore } from '../../src/store/tokens.js';
import type { PricePeriod } from '../../src/domain.js';
import { runCli } from '../helpers/cli-process.js';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { until } from '../helpers/wait.js';

const NL = requireMarket('NL');

function csv(periods: readonly PricePeriod[]): string {
  return ['start,price_per_mwh,duration_s', ...periods.map((p) => `${new Date(p.startMs).toISOString()},${p.pricePerMwh},${p.durationS}`)].join('\n') + '\n';
}

describe('prices imported while the daemon runs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mg-import-running-'));
  const configPath = join(dir, 'config.yaml');
  let daemon: DaemonProcess;
  let http: string;
  const tokens: Record<string, string> = {};
  // Today's and the seven weeks before (real prices, moved), then tomorrow's as the auction would publish them.
  const recorded = parsePriceCsv(readFileSync(DEMO_PRICES_URL, 'utf8'), NL).periods;
  const days = recordedDays(recorded, NL.timeZone)!;
  const throughToday = moveRecording(recorded, NL.timeZone, shiftOntoToday(days.first, days.last, localDayOf(NL.timeZone, Date.now()))!);
  const lastDay = throughToday.filter((p) => p.startMs >= throughToday.at(-1)!.startMs - 23 * 3_600_000);
  const tomorrow = lastDay.map((p) => ({ ...p, startMs: p.startMs + 86_400_000 }));

  beforeAll(async () => {
    const port = await freePort();
    http = `http://127.0.0.1:${port}`;
    writeFileSync(
      configPath,
      stringify({
        organization_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
        data_dir: join(dir, 'data'),
        log_level: 'info',
        clock: { trust: 'system' },
        http: { host: '127.0.0.1', port },
        prices: { regions: ['NL'], source: 'none' },
        forecast: { enabled: true, training_window_days: 28 },
        ocpp: { host: '127.0.0.1', port: await freePort() },
        chargers: [{ id: 'CP-1', password: 'import-running-key-01', auth: 'accept_all', connectors: [{ connector_id: 1 }] }],
      }),
    );
    writeFileSync(join(dir, 'through-today.csv'), csv(throughToday));
    writeFileSync(join(dir, 'tomorrow.csv'), csv(tomorrow));
    // Tokens stored before the daemon starts, as `metergate token create` does.
    const db = openDatabase(databasePath(join(dir, 'data')));
    for (const type of ['price_forecast', 'cpo'] as const) tokens[type] = new TokenStore(db).create({ name: type, type, nowMs: Date.now() }).token;
    db.close();
    daemon = await startDaemon(configPath);
  }, 120_000);
  afterAll(async () => {
    await daemon?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const forecastHealth = async () => ((await (await fetch(`${http}/healthz`)).json()) as { components: Record<string, { status: string; reason: string }> }).components.forecast!;

  it('forecasts from prices imported after the start within seconds, and /healthz says so', { timeout: 120_000 }, async () => {
    // Nothing to forecast from yet.
    await until(async () => /nothing to forecast from/.test((await forecastHealth()).reason), 'the forecaster\'s first (empty) run', 60_000);
    const imported = await runCli(['prices', 'import', join(dir, 'through-today.csv'), '--region', 'NL', '-c', configPath], {}, 'source');
    expect(imported.code, imported.stderr).toBe(0);
    // The hourly run is not waited for: the watch sees the commit within 2 s and the forecaster runs.
    await until(async () => (await forecastHealth()).reason.startsWith('every day of the horizon forecast'), 'a forecast from the imported prices', 60_000);
    expect(daemon.output()).toContain('prices stored by another process (prices import): forecast and charging plans refreshed');
    const res = await fetch(`${http}/api/v1/market_price_forecast?region=NL`, { headers: { authorization: `Bearer ${tokens.price_forecast}` } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { prices: Array<{ price_per_mwh: number | null; forecast: number | null }> };
    expect(body.prices.filter((p) => p.price_per_mwh !== null).length).toBeGreaterThanOrEqual(23);
    expect(body.prices.filter((p) => p.forecast !== null).length).toBeGreaterThanOrEqual(24 * 6);
  });

  it('plans a target again when tomorrow\'s prices are imported', { timeout: 120_000 }, async () => {
    const departure = new Date(Math.ceil((Date.now() + 30 * 3_600_000) / 900_000) * 900_000).toISOString();
    const put = await fetch(`${http}/api/v1/chargers/CP-1/connectors/1/plan`, {
      method: 'PUT',
      headers: { authorization: `Token ${tokens.cpo}`, 'content-type': 'application/json' },
      body: JSON.stringify({ departure_time: departure, energy_wh: 20_000 }),
    });
    expect(put.status).toBe(201);
    const before = daemon.output().split('charging plan updated after new prices').length;
    const imported = await runCli(['prices', 'import', join(dir, 'tomorrow.csv'), '--region', 'NL', '-c', configPath], {}, 'source');
    expect(imported.code, imported.stderr).toBe(0);
    await until(() => daemon.output().split('charging plan updated after new prices').length > before, 'the plan made again on the imported prices', 30_000);
    expect(daemon.output()).toMatch(/"chargePointId":"CP-1","connectorId":1[^\n]*charging plan updated after new prices/);
    // The forecast now starts the day after tomorrow: tomorrow is priced.
    await until(async () => {
      const res = await fetch(`${http}/status.json`);
      const report = (await res.json()) as { prices: Array<{ periods: Array<{ period_start: string; price_per_mwh: number | null }> }> };
      const tomorrowStart = tomorrow[0]!.startMs;
      return report.prices[0]!.periods.filter((p) => Date.parse(p.period_start) >= tomorrowStart).every((p) => p.price_per_mwh !== null);
    }, 'tomorrow priced on the status page', 30_000);
  });
});
