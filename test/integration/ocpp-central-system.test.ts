// The OCPP 1.6J central system in a running gateway (Daemon with its real modules), with
// chargers simulated by ocpp-rpc's RPCClient in strict mode: every answer of ours is
// validated against the official OCPP 1.6 schemas on the charger's side, and a call that
// does not pass would reject. ws:// (basic auth) and wss:// (TLS with the gateway's
// certificate + basic auth). A full session is priced by GET /api/v1/cdrs on real NL prices.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RPCClient } from 'ocpp-rpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import { createContext, Daemon } from '../../src/daemon.js';
import { freePort } from '../../src/free-port.js';
import { createLogger } from '../../src/log.js';
import { TokenStore } from '../../src/store/tokens.js';
import { makeCertificates } from '../helpers/mosquitto.js';
import { loadNl2025Prices } from '../helpers/real-prices.js';
import { hasSharedData } from '../helpers/shared-data.js';
import { until } from '../helpers/wait.js';

// ocpp-rpc's typings mark every client option required although each has a default.
type ClientOptions = ConstructorParameters<typeof RPCClient>[0];
const clientOptions = (o: Partial<ClientOptions>) => o as ClientOptions;

const PASSWORD = 'charger-secret-0123456789';
const OTHER_PASSWORD = 'another-secret-0123456789';

describe.skipIf(!hasSharedData)('OCPP 1.6J central system (strict RPCClient chargers over ws and wss)', () => {
  let dir: string;
  let daemon: Daemon;
  let ca: string;
  let ports: { ocpp: number; ocppTls: number; http: number };
  let cdrsToken: string;
  const clients: RPCClient[] = [];
  const logLines: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'metergate-ocpp-'));
    const certs = makeCertificates(dir);
    ca = readFileSync(certs.ca, 'utf8');
    ports = { ocpp: await freePort(), ocppTls: await freePort(), http: await freePort() };
    const config = validateConfig(
      {
        organization_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
        data_dir: join(dir, 'data'),
        log_level: 'fatal',
        http: { host: '127.0.0.1', port: ports.http, tls: { cert_file: certs.cert, key_file: certs.key } },
        prices: { regions: ['NL'], source: 'none' },
        forecast: { enabled: false },
        ocpp: { host: '127.0.0.1', port: ports.ocpp, tls_port: ports.ocppTls },
        chargers: [
          { id: 'CP-OPEN', password: PASSWORD, auth: 'accept_all' },
          { id: 'CP-LIST', password: OTHER_PASSWORD, auth: { id_tags: ['TAG-OK'] } },
        ],
      },
      'test',
      {},
    );
    const ctx = createContext(config, { logger: createLogger('warn', { write: (line: string) => void logLines.push(line) }) });
    expect(loadNl2025Prices(ctx.db)).toBeGreaterThan(10_000);
    cdrsToken = new TokenStore(ctx.db).create({ name: 'test-cdrs', type: 'cdrs', nowMs: Date.now() }).token;
    daemon = new Daemon(ctx);
    await daemon.start();
  }, 60_000);

  afterAll(async () => {
    for (const c of clients) await c.close({ force: true }).catch(() => undefined);
    await daemon?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  function charger(identity: string, opts: { password?: string; tls?: boolean; strict?: boolean } = {}): RPCClient {
    const client = new RPCClient(clientOptions({
      endpoint: opts.tls ? `wss://localhost:${ports.ocppTls}` : `ws://127.0.0.1:${ports.ocpp}`,
      identity,
      password: opts.password ?? PASSWORD,
      protocols: ['ocpp1.6'],
      strictMode: opts.strict ?? true,
      reconnect: false,
      wsOpts: opts.tls ? { ca } : {},
    }));
    clients.push(client);
    return client;
  }

  function api(path: string, opts: { method?: string; token?: string; body?: unknown } = {}): Promise<{ status: number; body: any }> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { authorization: `Token ${opts.token ?? cdrsToken}` };
      if (opts.body !== undefined) headers['content-type'] = 'application/json';
      const req = request(`https://localhost:${ports.http}${path}`, { ca, method: opts.method ?? 'GET', headers }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text.startsWith('{') ? JSON.parse(text) : text }));
      });
      req.on('error', reject);
      req.end(opts.body === undefined ? undefined : JSON.stringify(opts.body));
    });
  }

  const count = (sql: string, ...args: unknown[]) => (daemon.ctx.db.prepare(sql).pluck().get(...args) as number) ?? 0;

  it('refuses an unknown charge point id and a wrong password at the handshake', async () => {
    await expect(charger('CP-UNKNOWN').connect()).rejects.toMatchObject({ code: 401 });
    await expect(charger('CP-OPEN', { password: 'wrong-password-0123456' }).connect()).rejects.toMatchObject({ code: 401 });
    await expect(charger('CP-OPEN', { password: OTHER_PASSWORD }).connect()).rejects.toMatchObject({ code: 401 });
    // The right password over TLS too (profile 2), and no password at all is refused.
    const tls = charger('CP-OPEN', { tls: true });
    await tls.connect();
    await tls.close();
    const bare = new RPCClient(clientOptions({ endpoint: `ws://127.0.0.1:${ports.ocpp}`, identity: 'CP-OPEN', protocols: ['ocpp1.6'], strictMode: true, reconnect: false }));
    clients.push(bare);
    await expect(bare.connect()).rejects.toMatchObject({ code: 401 });
    expect(logLines.some((l) => l.includes('unknown charge point id') && l.includes('CP-UNKNOWN'))).toBe(true);
    // A plain HTTP request is answered, not left hanging.
    const plain = await fetch(`http://127.0.0.1:${ports.ocpp}/CP-OPEN`);
    expect(plain.status).toBe(426);
    expect(await plain.text()).toContain('OCPP 1.6J');
    expect(logLines.join('\n')).not.toContain('wrong-password');
  });

  it('boots over ws (Accepted with the heartbeat interval), heartbeats, takes status notifications', async () => {
    const cp = charger('CP-OPEN');
    await cp.connect();
    const boot = (await cp.call('BootNotification', { chargePointVendor: 'Alfen', chargePointModel: 'Eve Single', chargePointSerialNumber: 'ACE0012345' })) as any;
    expect(boot.status).toBe('Accepted');
    expect(boot.interval).toBe(300);
    expect(Math.abs(Date.parse(boot.currentTime) - Date.now())).toBeLessThan(60_000);
    const hb = (await cp.call('Heartbeat', {})) as any;
    expect(Date.parse(hb.currentTime)).toBeGreaterThan(0);
    expect(await cp.call('StatusNotification', { connectorId: 1, errorCode: 'NoError', status: 'Available', timestamp: new Date().toISOString() })).toEqual({});
    expect(daemon.ctx.db.prepare('SELECT vendor, model, serial_number FROM ocpp_charge_points WHERE charge_point_id = ?').get('CP-OPEN')).toEqual({ vendor: 'Alfen', model: 'Eve Single', serial_number: 'ACE0012345' });
    expect(count("SELECT count(*) FROM ocpp_connector_status WHERE charge_point_id = 'CP-OPEN' AND status = 'Available'")).toBe(1);
    await cp.close();
  });

  it('authorizes from the local id-tag list: a listed tag Accepted, any other Invalid; accept_all accepts any', async () => {
    const listed = charger('CP-LIST', { password: OTHER_PASSWORD, tls: true });
    await listed.connect();
    expect(await listed.call('Authorize', { idTag: 'TAG-OK' })).toEqual({ idTagInfo: { status: 'Accepted' } });
    expect(await listed.call('Authorize', { idTag: 'tag-ok' })).toEqual({ idTagInfo: { status: 'Accepted' } });
    expect(await listed.call('Authorize', { idTag: 'STRANGER' })).toEqual({ idTagInfo: { status: 'Invalid' } });
    await listed.close();
    const open = charger('CP-OPEN');
    await open.connect();
    expect(await open.call('Authorize', { idTag: 'STRANGER' })).toEqual({ idTagInfo: { status: 'Accepted' } });
    await open.close();
  });

  it('a full session over wss, with a reconnect in the middle and late values, priced on real NL prices once stopped', async () => {
    // Real prices: 2025-09-30 21:00Z hourly 90.00 EUR/MWh; 22:00Z 102.6; 22:15Z 92.2.
    // 21:30Z -> 22:30Z at 11 kW: 5.5 x 90 + 2.75 x 102.6 + 2.75 x 92.2 = 1030.7 -> 1.0307 EUR
    let cp = charger('CP-OPEN', { tls: true });
    await cp.connect();
    await cp.call('BootNotification', { chargePointVendor: 'Alfen', chargePointModel: 'Eve Single' });
    const start = { connectorId: 1, idTag: 'ANY-TAG', meterStart: 1000, timestamp: '2025-09-30T21:30:00.000Z' };
    const started = (await cp.call('StartTransaction', start)) as { transactionId: number; idTagInfo: { status: string } };
    expect(started.idTagInfo.status).toBe('Accepted');
    const id = `ocpp:CP-OPEN:${started.transactionId}`;
    // The quarter-hour value first, the older one late (after a reconnect): each by its own timestamp.
    await cp.call('MeterValues', {
      connectorId: 1,
      transactionId: started.transactionId,
      meterValue: [
        {
          timestamp: '2025-09-30T22:15:00Z',
          sampledValue: [
            { value: '9250', measurand: 'Energy.Active.Import.Register', unit: 'Wh', context: 'Sample.Periodic' },
            { value: '3.67', measurand: 'Power.Active.Import', unit: 'kW', phase: 'L1' },
            { value: '3.67', measurand: 'Power.Active.Import', unit: 'kW', phase: 'L2' },
            { value: '3.66', measurand: 'Power.Active.Import', unit: 'kW', phase: 'L3' },
          ],
        },
      ],
    });
    let cdr = await api(`/api/v1/cdrs/${id}`);
    expect(cdr.status).toBe(409);

    await cp.close();
    cp = charger('CP-OPEN', { tls: true });
    await cp.connect();
    await cp.call('MeterValues', { connectorId: 1, transactionId: started.transactionId, meterValue: [{ timestamp: '2025-09-30T22:00:00Z', sampledValue: [{ value: '6.5', unit: 'kWh' }] }] });
    expect(count('SELECT count(*) FROM ocpp_meter_values WHERE transaction_id = ?', started.transactionId)).toBe(5);
    expect((await api(`/api/v1/cdrs/${id}`)).status).toBe(409);

    const stop = await cp.call('StopTransaction', {
      transactionId: started.transactionId,
      meterStop: 12000,
      timestamp: '2025-09-30T22:30:00Z',
      idTag: 'ANY-TAG',
      reason: 'EVDisconnected',
      transactionData: [{ timestamp: '2025-09-30T22:30:00Z', sampledValue: [{ value: '12000', context: 'Transaction.End' }] }],
    });
    expect(stop).toEqual({ idTagInfo: { status: 'Accepted' } });
    cdr = await api(`/api/v1/cdrs/${id}`);
    expect(cdr.status, JSON.stringify(cdr.body)).toBe(200);
    expect(cdr.body).toMatchObject({ currency: 'EUR', start_date_time: '2025-09-30T21:30:00Z', end_date_time: '2025-09-30T22:30:00Z', total_cost: { excl_vat: 1.0307 } });
    // The session is the central system's: a PUT cannot take its id (charger sessions have their own id space).
    const cpo = new TokenStore(daemon.ctx.db).create({ name: 'test-cpo', type: 'cpo', nowMs: Date.now() }).token;
    const put = await api(`/api/v1/sessions/${id}`, {
      method: 'PUT',
      token: cpo,
      body: { power_market: { market_area_code: 'NL', sub_modality: 'DayAhead' }, status: 'completed', start_date_time: '2025-09-30T21:30:00Z', end_date_time: '2025-09-30T21:45:00Z', meter_readings: [{ reading_kwh: 0, timestamp: '2025-09-30T21:30:00Z' }, { reading_kwh: 1, timestamp: '2025-09-30T21:45:00Z' }] },
    });
    expect(put.status).toBe(422);
    expect(put.body.errors[0]).toMatchObject({ path: 'cpo_transaction_id', message: expect.stringContaining("the gateway's charger sessions") });
    // A stop repeated after a lost answer changes nothing.
    await cp.call('StopTransaction', { transactionId: started.transactionId, meterStop: 12000, timestamp: '2025-09-30T22:30:00Z' });
    expect((await api(`/api/v1/cdrs/${id}`)).body.total_cost).toEqual({ excl_vat: 1.0307 });
    await cp.close();
  });

  it('a StartTransaction repeated after a lost answer gets the same transaction, never a second one', async () => {
    const start = { connectorId: 2, idTag: 'ANY-TAG', meterStart: 50_000, timestamp: '2025-10-01T08:00:00Z' };
    let cp = charger('CP-OPEN');
    await cp.connect();
    const first = (await cp.call('StartTransaction', start)) as { transactionId: number };
    // The answer "lost": the charger reconnects and sends the same request again.
    await cp.close({ force: true });
    cp = charger('CP-OPEN');
    await cp.connect();
    const again = (await cp.call('StartTransaction', start)) as { transactionId: number };
    expect(again.transactionId).toBe(first.transactionId);
    expect(count("SELECT count(*) FROM ocpp_transactions WHERE charge_point_id = 'CP-OPEN' AND connector_id = 2")).toBe(1);
    expect(count('SELECT count(*) FROM sessions WHERE cpo_transaction_id = ?', `ocpp:CP-OPEN:${first.transactionId}`)).toBe(1);
    // A different start (another meterStart) is another transaction.
    const other = (await cp.call('StartTransaction', { ...start, meterStart: 50_001 })) as { transactionId: number };
    expect(other.transactionId).not.toBe(first.transactionId);
    await cp.close();
  });

  it('a StopTransaction for an unknown transaction id is answered and stores nothing', async () => {
    const cp = charger('CP-LIST', { password: OTHER_PASSWORD });
    await cp.connect();
    const before = count('SELECT count(*) FROM ocpp_meter_values') + count('SELECT count(*) FROM sessions');
    const answer = await cp.call('StopTransaction', { transactionId: 987654, meterStop: 100, timestamp: '2025-10-01T09:00:00Z', transactionData: [{ timestamp: '2025-10-01T09:00:00Z', sampledValue: [{ value: '100' }] }] });
    expect(answer).toEqual({});
    expect(count('SELECT count(*) FROM ocpp_meter_values') + count('SELECT count(*) FROM sessions')).toBe(before);
    expect((await api('/api/v1/cdrs/ocpp:CP-LIST:987654')).status).toBe(404);
    // Another charger's transaction is not this charger's to stop.
    const mine = charger('CP-OPEN');
    await mine.connect();
    const tx = (await mine.call('StartTransaction', { connectorId: 1, idTag: 'X', meterStart: 0, timestamp: '2025-10-01T09:00:00Z' })) as { transactionId: number };
    expect(await cp.call('StopTransaction', { transactionId: tx.transactionId, meterStop: 100, timestamp: '2025-10-01T09:30:00Z' })).toEqual({});
    expect((await api(`/api/v1/cdrs/ocpp:CP-OPEN:${tx.transactionId}`)).status).toBe(409);
    await cp.close();
    await mine.close();
  });

  it('a call failing validation gets a CallError; a malformed frame is ignored; the connection stays; nothing half-stored', async () => {
    // A non-strict client, so it can send what the schemas forbid.
    const cp = charger('CP-OPEN', { strict: false });
    await cp.connect();
    const invalid = await cp.call('BootNotification', { chargePointVendor: 'Alfen' }).catch((e: unknown) => e as { rpcErrorCode?: string });
    expect(invalid).toMatchObject({ rpcErrorCode: expect.stringMatching(/OccurenceConstraintViolation|OccurrenceConstraintViolation|FormationViolation|ProtocolError/) });
    const typed = await cp.call('Heartbeat', { extra: 1 }).catch((e: unknown) => e as { rpcErrorCode?: string });
    expect(typed).toMatchObject({ rpcErrorCode: expect.any(String) });
    cp.sendRaw('this is not OCPP-J');
    cp.sendRaw('[2, "x"');
    await until(() => logLines.filter((l) => l.includes('malformed OCPP frame ignored')).length === 2, 'the two malformed frames logged', 30_000);
    expect(logLines.some((l) => l.includes('OCPP call failed schema validation') && l.includes('BootNotification'))).toBe(true);
    expect(await cp.call('Heartbeat', {})).toMatchObject({ currentTime: expect.any(String) });
    // A register value that is not a number: the whole MeterValues is refused, no value of it kept.
    const tx = (await cp.call('StartTransaction', { connectorId: 3, idTag: 'T', meterStart: 0, timestamp: '2025-10-01T10:00:00Z' })) as { transactionId: number };
    const before = count('SELECT count(*) FROM ocpp_meter_values WHERE transaction_id = ?', tx.transactionId);
    const bad = await cp
      .call('MeterValues', { connectorId: 3, transactionId: tx.transactionId, meterValue: [{ timestamp: '2025-10-01T10:15:00Z', sampledValue: [{ value: '1200' }, { value: 'twelve hundred' }] }] })
      .catch((e: unknown) => e as { rpcErrorCode?: string });
    expect(bad).toMatchObject({ rpcErrorCode: 'PropertyConstraintViolation' });
    expect(count('SELECT count(*) FROM ocpp_meter_values WHERE transaction_id = ?', tx.transactionId)).toBe(before);
    expect(await cp.call('Heartbeat', {})).toMatchObject({ currentTime: expect.any(String) });
    await cp.close();
  });

  it('a charger whose clock is ahead is said, shown and counted; its transaction is still stored; back in step when it sets its clock', async () => {
    const cp = charger('CP-OPEN');
    await cp.connect();
    const ahead = new Date(Date.now() + 2 * 3_600_000).toISOString();
    const tx = (await cp.call('StartTransaction', { connectorId: 4, idTag: 'T', meterStart: 0, timestamp: ahead })) as { transactionId: number };
    expect(count('SELECT count(*) FROM ocpp_transactions WHERE transaction_id = ?', tx.transactionId)).toBe(1);
    await until(() => logLines.some((l) => l.includes('charger clock ahead of the gateway clock') && l.includes('CP-OPEN')), 'the clock warning', 30_000);
    const status = await api('/status.json');
    const open = status.body.chargers.find((c: { charge_point_id: string }) => c.charge_point_id === 'CP-OPEN');
    expect(open.clock_ahead_s).toBeGreaterThan(7100);
    expect(open.clock_ahead_s).toBeLessThan(7300);
    expect((await api('/metrics')).body).toMatch(/metergate_ocpp_charger_clock_ahead_seconds\{charge_point_id="CP-OPEN"\} 7[12]\d\d/);
    // The charger takes the time from our Heartbeat answer and stamps the present again.
    const { currentTime } = (await cp.call('Heartbeat', {})) as { currentTime: string };
    await cp.call('StatusNotification', { connectorId: 4, errorCode: 'NoError', status: 'Available', timestamp: currentTime });
    const after = (await api('/status.json')).body.chargers.find((c: { charge_point_id: string }) => c.charge_point_id === 'CP-OPEN');
    expect(after.clock_ahead_s).toBeNull();
    await cp.close();
  });

  it('/metrics, /healthz and /status.json show the chargers; a reconnect replaces the older connection', async () => {
    const cp = charger('CP-LIST', { password: OTHER_PASSWORD });
    await cp.connect();
    const metrics = await api('/metrics');
    expect(metrics.body).toMatch(/metergate_ocpp_charger_connected\{charge_point_id="CP-LIST"\} 1/);
    expect(metrics.body).toMatch(/metergate_ocpp_messages_total\{action="StartTransaction",outcome="ok"\} \d+/);
    const health = await api('/healthz');
    expect(JSON.stringify(health.body)).toContain('charge point(s) connected');
    // The same charger again before its old socket went: the new connection replaces the old one.
    let oldClosed = false;
    cp.on('close', () => (oldClosed = true));
    const again = charger('CP-LIST', { password: OTHER_PASSWORD });
    await again.connect();
    await until(() => oldClosed, 'the older connection of CP-LIST closed', 30_000);
    expect(await again.call('Heartbeat', {})).toMatchObject({ currentTime: expect.any(String) });
    expect((await api('/metrics')).body).toMatch(/metergate_ocpp_charger_connected\{charge_point_id="CP-LIST"\} 1/);
    // The status page's data: each configured charger, its connectors and open sessions with the energy so far.
    await again.call('StatusNotification', { connectorId: 1, errorCode: 'NoError', status: 'Charging' });
    const tx = (await again.call('StartTransaction', { connectorId: 1, idTag: 'TAG-OK', meterStart: 2000, timestamp: '2025-10-02T10:00:00Z' })) as { transactionId: number };
    await again.call('MeterValues', { connectorId: 1, transactionId: tx.transactionId, meterValue: [{ timestamp: '2025-10-02T10:10:00Z', sampledValue: [{ value: '3.85', unit: 'kWh' }] }] });
    const status = await api('/status.json');
    const list = status.body.chargers.find((c: { charge_point_id: string }) => c.charge_point_id === 'CP-LIST');
    expect(list).toMatchObject({
      state: 'connected',
      connectors: [{ connector_id: 1, status: 'Charging', error_code: 'NoError' }],
      open_transactions: [{ transaction_id: tx.transactionId, connector_id: 1, session: `ocpp:CP-LIST:${tx.transactionId}`, started_at: '2025-10-02T10:00:00.000Z', energy_wh: 1850 }],
    });
    expect(status.body.chargers.map((c: { charge_point_id: string }) => c.charge_point_id).sort()).toEqual(['CP-LIST', 'CP-OPEN']);
    await again.close();
    await until(async () => /metergate_ocpp_charger_connected\{charge_point_id="CP-LIST"\} 0/.test((await api('/metrics')).body), 'CP-LIST shown disconnected', 30_000);
  });
});
