// Sessions are never mixed, stuck or lost (issue 20 point 4) and GETs change nothing
// (point 7), against `metergate run` as its own process, strict ocpp-rpc chargers and the
// daemon's real SQLite file with real NL prices:
// - an operator's session `CP-A-1` and the charger's transaction 1 live side by side
//   (charger sessions are `ocpp:<cp>:<tx>`); neither changes the other's cdr;
// - a register value that breaks monotonicity against meterStart/meterStop is left out,
//   logged and counted, and the session prices as without it;
// - a transaction the charger never stops is closed at its last register value when the
//   connector starts another one or is Available after a reboot, flagged; the charger's own
//   stop still wins within the late-value cut-off;
// - a charger clock ahead (one message) or behind (messages sent live, not a drained queue)
//   flags its transactions, whole hours named "local time sent as UTC", and their cdrs 422;
// - every GET route leaves the database file unchanged (PRAGMA data_version).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { RPCClient } from 'ocpp-rpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/free-port.js';
import { databasePath, openDaemonDatabase } from '../../src/store/db.js';
import { TokenStore } from '../../src/store/tokens.js';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { loadNl2025Prices } from '../helpers/real-prices.js';
import { hasSharedData } from '../helpers/shared-data.js';
import { until } from '../helpers/wait.js';
import { centralSystemConfigHead } from '../helpers/central-system-config.js';

type ClientOptions = ConstructorParameters<typeof RPCClient>[0];
const PASSWORD = 'held-sessions-0123456789';
const openapi = JSON.parse(readFileSync(new URL('../../src/http/openapi.json', import.meta.url), 'utf8')) as { paths: Record<string, { get?: unknown }> };
const MARKET = { market_area_code: 'NL', sub_modality: 'DayAhead' };

describe.skipIf(!hasSharedData)('metergate run: charger sessions held to the meter standard', () => {
  const dir = mkdtempSync(join(tmpdir(), 'metergate-ocpp-held-'));
  const dataDir = join(dir, 'data');
  let daemon: DaemonProcess;
  let httpPort: number;
  let ocppPort: number;
  const tokens = { cdrs: '', cpo: '', forecast: '' };
  const clients: RPCClient[] = [];

  beforeAll(async () => {
    mkdirSync(dataDir);
    const db = openDaemonDatabase(databasePath(dataDir));
    expect(loadNl2025Prices(db)).toBeGreaterThan(10_000);
    const store = new TokenStore(db);
    tokens.cdrs = store.create({ name: 'cdrs', type: 'cdrs', nowMs: Date.now() }).token;
    tokens.cpo = store.create({ name: 'cpo', type: 'cpo', nowMs: Date.now() }).token;
    tokens.forecast = store.create({ name: 'forecast', type: 'price_forecast', nowMs: Date.now() }).token;
    db.close();
    [ocppPort, httpPort] = [await freePort(), await freePort()];
    const config = join(dir, 'config.yaml');
    writeFileSync(
      config,
      [
        ...centralSystemConfigHead({ dataDir, httpPort, ocppPort }),
        'chargers:',
        // Connector 1 configured: plans are made only for configured connectors (docs/chargers.md "Ceilings").
        ...['CP-A', 'CP-B', 'CP-C'].flatMap((id) => [`  - id: ${id}`, `    password: ${PASSWORD}`, '    auth: accept_all', '    connectors: [{ connector_id: 1 }]']),
        '',
      ].join('\n'),
    );
    daemon = await startDaemon(config);
  }, 60_000);

  afterAll(async () => {
    for (const c of clients) await c.close({ force: true }).catch(() => undefined);
    await daemon?.kill9();
    rmSync(dir, { recursive: true, force: true });
  });

  const connect = async (identity: string) => {
    const cp = new RPCClient({ endpoint: `ws://127.0.0.1:${ocppPort}`, identity, password: PASSWORD, protocols: ['ocpp1.6'], strictMode: true, reconnect: false } as ClientOptions);
    clients.push(cp);
    await cp.connect();
    return cp;
  };
  const api = async (method: string, path: string, token: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const headers: Record<string, string> = { authorization: path.startsWith('/api/v1/market_price_forecast') ? `Bearer ${token}` : `Token ${token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`http://127.0.0.1:${httpPort}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: text.startsWith('{') ? JSON.parse(text) : text };
  };
  const cdr = (id: string) => api('GET', `/api/v1/cdrs/${id}`, tokens.cdrs);
  const view = async (cp: string, tx: number) => (await api('GET', `/api/v1/chargers/${cp}/transactions/${tx}`, tokens.cpo)).body as Record<string, any>;
  const metric = async (re: RegExp) => Number(re.exec((await api('GET', '/metrics', '')).body as string)?.[1] ?? NaN);
  const register = (timestamp: string, wh: number) => ({ timestamp, sampledValue: [{ value: String(wh), measurand: 'Energy.Active.Import.Register', unit: 'Wh' }] });
  const meterValues = (cp: RPCClient, connectorId: number, transactionId: number, ...values: Array<[string, number]>) =>
    cp.call('MeterValues', { connectorId, transactionId, meterValue: values.map(([t, wh]) => register(t, wh)) });
  /** What the meter_readings endpoint makes of the same readings: the price without the left-out values. */
  const priceOf = async (readings: Array<[string, number]>) =>
    (await api('POST', '/api/v1/cdrs/meter_readings', tokens.cdrs, { power_market: MARKET, meter_readings: readings.map(([timestamp, kwh]) => ({ timestamp, reading_kwh: kwh })) })).body.total_cost;

  it("an operator's session CP-A-1 and the charger's transaction 1 live side by side", { timeout: 60_000 }, async () => {
    const put = { power_market: MARKET, status: 'completed', start_date_time: '2025-09-30T21:30:00Z', end_date_time: '2025-09-30T22:30:00Z', meter_readings: [{ reading_kwh: 0, timestamp: '2025-09-30T21:30:00Z' }, { reading_kwh: 3, timestamp: '2025-09-30T22:30:00Z' }] };
    expect((await api('PUT', '/api/v1/sessions/CP-A-1', tokens.cpo, put)).status).toBe(201);
    const operator = await cdr('CP-A-1');
    expect(operator.status).toBe(200);
    // The site moves CP-A from its CPO integration to this gateway: its first transaction is 1.
    const cp = await connect('CP-A');
    await cp.call('BootNotification', { chargePointVendor: 'Alfen', chargePointModel: 'Eve Single' });
    const { transactionId } = (await cp.call('StartTransaction', { connectorId: 1, idTag: 'T', meterStart: 1000, timestamp: '2025-09-30T21:30:00Z' })) as { transactionId: number };
    expect(transactionId).toBe(1);
    await cp.call('StopTransaction', { transactionId, meterStop: 12_000, timestamp: '2025-09-30T22:30:00Z' });
    // The operator's cdr is as it was (same id, price and last_updated); the charger's is its own.
    expect(await cdr('CP-A-1')).toEqual(operator);
    const charger = await cdr('ocpp:CP-A:1');
    expect(charger.status).toBe(200);
    expect(charger.body.total_cost).toEqual({ excl_vat: 1.0307 });
    expect(charger.body.id).not.toBe(operator.body.id);
    expect(await view('CP-A', 1)).toMatchObject({ cpo_transaction_id: 'ocpp:CP-A:1', cdr: '/api/v1/cdrs/ocpp:CP-A:1', stopped_by: 'charger' });
    // An operator cannot take a charger session's id.
    const taken = await api('PUT', '/api/v1/sessions/ocpp:CP-A:1', tokens.cpo, put);
    expect(taken.status).toBe(422);
    expect(taken.body.errors[0].path).toBe('cpo_transaction_id');
    await cp.close();
  });

  it('a register value below meterStart or above meterStop is left out, logged and counted; the session prices without it', { timeout: 60_000 }, async () => {
    const cp = await connect('CP-A');
    const { transactionId } = (await cp.call('StartTransaction', { connectorId: 1, idTag: 'T', meterStart: 100_000, timestamp: '2025-10-01T08:00:00Z' })) as { transactionId: number };
    // The example: 105000, 0, 115000 between meterStart 100000 and meterStop 120000; and 130000, above meterStop.
    await meterValues(cp, 1, transactionId, ['2025-10-01T08:15:00Z', 105_000], ['2025-10-01T08:30:00Z', 0]);
    await meterValues(cp, 1, transactionId, ['2025-10-01T08:45:00Z', 115_000], ['2025-10-01T08:50:00Z', 130_000]);
    await cp.call('StopTransaction', { transactionId, meterStop: 120_000, timestamp: '2025-10-01T09:00:00Z' });
    const priced = await cdr(`ocpp:CP-A:${transactionId}`);
    expect(priced.status, JSON.stringify(priced.body)).toBe(200);
    expect(priced.body.total_cost).toEqual(
      await priceOf([['2025-10-01T08:00:00Z', 100], ['2025-10-01T08:15:00Z', 105], ['2025-10-01T08:45:00Z', 115], ['2025-10-01T09:00:00Z', 120]]),
    );
    expect(await view('CP-A', transactionId)).toMatchObject({ register_values_dropped: 2 });
    expect(await metric(/metergate_ocpp_register_values_dropped_total\{charge_point_id="CP-A",reason="below-meter-start"\} (\d+)/)).toBe(1);
    expect(await metric(/metergate_ocpp_register_values_dropped_total\{charge_point_id="CP-A",reason="above-meter-stop"\} (\d+)/)).toBe(1);
    expect(daemon.output()).toContain('charger register value left out of its session');
    await cp.close();
  });

  it('a transaction the charger never stops is closed at its last register value by a new start or Available after a reboot', { timeout: 60_000 }, async () => {
    const cp = await connect('CP-A');
    const open = async () => metric(/metergate_ocpp_open_transactions (\d+)/);
    const openBefore = await open();
    const start = async (connectorId: number, meterStart: number, timestamp: string) =>
      ((await cp.call('StartTransaction', { connectorId, idTag: 'T', meterStart, timestamp })) as { transactionId: number }).transactionId;
    const lost = await start(2, 0, '2025-10-02T10:00:00Z');
    await meterValues(cp, 2, lost, ['2025-10-02T10:15:00Z', 2000], ['2025-10-02T10:30:00Z', 4000]);
    expect(await open()).toBe(openBefore + 1);
    // The charger lost the stop: its next transaction on the connector closes the old one.
    const next = await start(2, 4100, '2025-10-02T11:00:00Z');
    expect(await open()).toBe(openBefore + 1);
    expect(await view('CP-A', lost)).toMatchObject({ status: 'completed', stopped_by: 'gateway', stop_inferred_reason: 'new-transaction', meter_stop_wh: 4000, end_date_time: '2025-10-02T10:30:00Z' });
    const closed = await cdr(`ocpp:CP-A:${lost}`);
    expect(closed.status, JSON.stringify(closed.body)).toBe(200);
    expect(closed.body.total_cost).toEqual(await priceOf([['2025-10-02T10:00:00Z', 0], ['2025-10-02T10:15:00Z', 2], ['2025-10-02T10:30:00Z', 4]]));

    // A reboot that lost the queue: Available on the connector after the BootNotification closes what was open there.
    const rebooted = await start(3, 0, '2025-10-02T12:00:00Z');
    await meterValues(cp, 3, rebooted, ['2025-10-02T12:30:00Z', 3000]);
    await cp.call('BootNotification', { chargePointVendor: 'Alfen', chargePointModel: 'Eve Single' });
    await cp.call('StatusNotification', { connectorId: 3, errorCode: 'NoError', status: 'Available' });
    expect(await view('CP-A', rebooted)).toMatchObject({ stopped_by: 'gateway', stop_inferred_reason: 'reboot', meter_stop_wh: 3000, end_date_time: '2025-10-02T12:30:00Z' });
    expect(await open()).toBe(openBefore + 1); // `next` only
    // The stop was only late: the charger's own StopTransaction, within the cut-off, wins.
    await cp.call('StopTransaction', { transactionId: rebooted, meterStop: 3500, timestamp: '2025-10-02T12:40:00Z' });
    expect(await view('CP-A', rebooted)).toMatchObject({ stopped_by: 'charger', stop_inferred_reason: null, meter_stop_wh: 3500, end_date_time: '2025-10-02T12:40:00Z' });
    await cp.call('StopTransaction', { transactionId: next, meterStop: 5000, timestamp: '2025-10-02T11:30:00Z' });
    expect(await open()).toBe(openBefore);
    expect(daemon.output()).toContain('transaction closed by the gateway');
    await cp.close();
  });

  it('a charger clock an hour ahead is named "local time sent as UTC": its transaction is flagged and its cdr 422', { timeout: 60_000 }, async () => {
    const cp = await connect('CP-B');
    const ahead = () => new Date(Date.now() + 3_600_000).toISOString();
    await cp.call('StatusNotification', { connectorId: 1, errorCode: 'NoError', status: 'Preparing', timestamp: ahead() });
    const { transactionId } = (await cp.call('StartTransaction', { connectorId: 1, idTag: 'T', meterStart: 0, timestamp: ahead() })) as { transactionId: number };
    await cp.call('StopTransaction', { transactionId, meterStop: 1000, timestamp: ahead() });
    expect((await view('CP-B', transactionId)).clock_problem).toContain('local time sent as UTC');
    const refused = await cdr(`ocpp:CP-B:${transactionId}`);
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toContain('local time sent as UTC');
    expect(refused.body.detail).toContain('UTC+1');
    expect(await metric(/metergate_ocpp_charger_clock_offset_seconds\{charge_point_id="CP-B"\} (-?\d+)/)).toBeGreaterThan(3500);
    await cp.close();
  });

  it('a charger clock behind is judged from messages sent live, not from a queue drained after a reconnect', { timeout: 90_000 }, async () => {
    const cp = await connect('CP-C');
    // A queue drained at once: old stamps, each message further on than the one before. Nothing flagged, priced.
    const { transactionId: queued } = (await cp.call('StartTransaction', { connectorId: 1, idTag: 'T', meterStart: 0, timestamp: '2025-10-03T08:00:00Z' })) as { transactionId: number };
    await meterValues(cp, 1, queued, ['2025-10-03T08:30:00Z', 5000]);
    await cp.call('StopTransaction', { transactionId: queued, meterStop: 11_000, timestamp: '2025-10-03T09:00:00Z' });
    expect((await view('CP-C', queued)).clock_problem).toBeNull();
    expect((await cdr(`ocpp:CP-C:${queued}`)).status).toBe(200);
    // Sent live by a clock two hours behind: the same offset over more than LIVE_SPAN_MS (10 s).
    const behind = () => new Date(Date.now() - 2 * 3_600_000).toISOString();
    const t0 = Date.now();
    const { transactionId } = (await cp.call('StartTransaction', { connectorId: 2, idTag: 'T', meterStart: 0, timestamp: behind() })) as { transactionId: number };
    expect((await view('CP-C', transactionId)).clock_problem).toBeNull(); // one old stamp may be a queued message
    await until(() => Date.now() - t0 > 11_000, 'more than 10 s of live messages', 30_000, 500);
    await cp.call('StatusNotification', { connectorId: 2, errorCode: 'NoError', status: 'Charging', timestamp: behind() });
    const flagged = (await view('CP-C', transactionId)).clock_problem as string;
    expect(flagged).toContain('local time sent as UTC');
    expect(flagged).toContain('2 h behind');
    const shown = async () => ((await api('GET', '/status.json', '')).body.chargers as Array<{ charge_point_id: string; clock_problem: string | null }>).find((c) => c.charge_point_id === 'CP-C')!.clock_problem;
    expect(await shown()).toBe(flagged);
    expect(await metric(/metergate_ocpp_charger_clock_offset_seconds\{charge_point_id="CP-C"\} (-?\d+)/)).toBeLessThan(-7100);
    await cp.call('StopTransaction', { transactionId, meterStop: 2000, timestamp: behind() });
    const refused = await cdr(`ocpp:CP-C:${transactionId}`);
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toContain('UTC-2');
    // The charger sets its clock from our Heartbeat answer: back in step, a new transaction is not flagged.
    const { currentTime } = (await cp.call('Heartbeat', {})) as { currentTime: string };
    await cp.call('StatusNotification', { connectorId: 2, errorCode: 'NoError', status: 'Available', timestamp: currentTime });
    expect(await shown()).toBeNull();
    const { transactionId: after } = (await cp.call('StartTransaction', { connectorId: 2, idTag: 'T', meterStart: 2000, timestamp: new Date().toISOString() })) as { transactionId: number };
    expect((await view('CP-C', after)).clock_problem).toBeNull();
    await cp.call('StopTransaction', { transactionId: after, meterStop: 2000, timestamp: new Date().toISOString() });
    await cp.close();
  });

  it('GETs change nothing: every GET route leaves the database file as it was', { timeout: 60_000 }, async () => {
    for (const c of clients) await c.close({ force: true }).catch(() => undefined);
    // A transaction whose outcome could not be priced at its stop (no prices for 2026): its view prices it on read, and must not store that.
    const reader = new Database(databasePath(dataDir), { readonly: true });
    const version = () => reader.pragma('data_version', { simple: true }) as number;
    const unpriced = reader.prepare('SELECT transaction_id, charge_point_id FROM ocpp_session_outcomes JOIN ocpp_transactions USING (transaction_id) WHERE priced_at_ms IS NULL LIMIT 1').get() as { transaction_id: number; charge_point_id: string } | undefined;
    expect(unpriced).toBeDefined();
    // A connector with a plan, so its plan GET answers one.
    const plan = await api('PUT', '/api/v1/chargers/CP-A/connectors/1/plan', tokens.cpo, { departure_time: new Date(Date.now() + 10 * 3_600_000).toISOString(), energy_wh: 10_000 });
    expect(plan.status, JSON.stringify(plan.body)).toBe(201);
    const paths = new Set<string>();
    for (const [template, item] of Object.entries(openapi.paths)) {
      if (!item.get) continue;
      paths.add(
        template
          .replace('{cpo_transaction_id}', 'CP-A-1')
          .replace('{charge_point_id}/transactions/{transaction_id}', `${unpriced!.charge_point_id}/transactions/${unpriced!.transaction_id}`)
          .replace('{charge_point_id}', 'CP-A')
          .replace('{connector_id}', '1'),
      );
    }
    for (const extra of ['/api/v1/cdrs/ocpp:CP-A:1', '/api/v1/cdrs/nobody', '/api/v1/market_price_forecast?region=NL', '/status/status.js', '/api/v1/cdrs/meter_readings']) paths.add(extra);
    expect(paths.size).toBeGreaterThan(12);
    const before = version();
    const answers: Record<string, number> = {};
    for (const path of paths) {
      for (const token of [tokens.cdrs, tokens.cpo, tokens.forecast]) answers[`${path} ${token.slice(0, 8)}`] = (await api('GET', path, token)).status;
    }
    // Each route answered (whatever it answered), and nothing was committed meanwhile.
    expect(answers[`/api/v1/chargers/CP-A/connectors/1/plan ${tokens.cpo.slice(0, 8)}`]).toBe(200);
    expect(answers[`/api/v1/cdrs/ocpp:CP-A:1 ${tokens.cdrs.slice(0, 8)}`]).toBe(200);
    expect(version(), JSON.stringify(answers)).toBe(before);
    // The check can fail: a write (a PUT) is seen by the same reader.
    await api('PUT', '/api/v1/sessions/GET-CONTROL', tokens.cpo, { power_market: MARKET, status: 'active', start_date_time: '2025-10-01T00:00:00Z', meter_readings: [] });
    expect(version()).not.toBe(before);
    reader.close();
  });
});
