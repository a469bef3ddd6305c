// The status page's Chargers section in a real browser (Debian's chromium via
// playwright-core): a strict ocpp-rpc charger connected over ws with an open session,
// another configured charger that is not connected; firmware, feature profiles, connectors
// with their open transaction (and /metrics the same); operations from the page go through
// the HTTP API with the operator's token, refused without it; a charger's last session's
// signed meter values outcome (issue 32), with the reason when it is not verified.
import { chromium, type Browser } from 'playwright-core';
import { RPCClient } from 'ocpp-rpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/free-port.js';
import { CentralSystem } from '../../src/ocpp/central-system.js';
import { startTestHttp, type TestHttp } from '../helpers/http.js';
import { meterKey, payload, signOcmf } from '../helpers/ocmf.js';
import { chromiumPath } from '../helpers/peers.js';
import { until } from '../helpers/wait.js';

type ClientOptions = ConstructorParameters<typeof RPCClient>[0];
const CHROMIUM = chromiumPath();
const PASSWORD = 'status-page-key-0123456';

describe.skipIf(!CHROMIUM)('status page: chargers', () => {
  let http: TestHttp;
  let central: CentralSystem;
  let cp: RPCClient;
  let browser: Browser;
  const resets: unknown[] = [];
  // CP-BARN's calibrated meter (its sessions are signed; it connects only in the last test).
  const barnKey = meterKey('ECDSA-secp256r1-SHA256');

  beforeAll(async () => {
    http = await startTestHttp({
      config: {
        prices: { regions: ['NL'], source: 'none' },
        ocpp: { host: '127.0.0.1', port: await freePort() },
        chargers: [
          { id: 'CP-DRIVEWAY', password: PASSWORD, auth: 'accept_all' },
          { id: 'CP-BARN', password: PASSWORD, auth: 'accept_all', meter_public_key: barnKey.publicKeyHex },
        ],
      },
      centralSystem: () => central ?? null,
    });
    central = new CentralSystem(http.ctx, http.charging);
    http.ctx.probes.observe([central]);
    await central.start();
    cp = new RPCClient({ endpoint: `ws://127.0.0.1:${central.port()}`, identity: 'CP-DRIVEWAY', password: PASSWORD, protocols: ['ocpp1.6'], strictMode: true, reconnect: false } as ClientOptions);
    cp.handle('GetConfiguration', async () => ({ configurationKey: [{ key: 'SupportedFeatureProfiles', readonly: true, value: 'Core,SmartCharging,RemoteTrigger' }] }));
    cp.handle('SetChargingProfile', async () => ({ status: 'Accepted' }));
    cp.handle('Reset', async ({ params }: { params?: unknown }) => {
        resets.push(params);
        return { status: 'Accepted' };
    });
    await cp.connect();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await cp?.close({ force: true });
    await central?.stop();
    await http?.close();
  });

  it('shows each configured charger, connected or not, its connectors and its open session with the energy so far; operations need the token', { timeout: 120_000 }, async () => {
    await cp.call('BootNotification', { chargePointVendor: 'Alfen', chargePointModel: 'Eve Single', firmwareVersion: '6.1.0-4151' });
    await cp.call('StatusNotification', { connectorId: 1, errorCode: 'NoError', status: 'Charging' });
    const tx = (await cp.call('StartTransaction', { connectorId: 1, idTag: 'T', meterStart: 10_000, timestamp: new Date(Date.now() - 600_000).toISOString() })) as { transactionId: number };
    await cp.call('MeterValues', { connectorId: 1, transactionId: tx.transactionId, meterValue: [{ timestamp: new Date().toISOString(), sampledValue: [{ value: '11850' }] }] });

    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    await page.goto(`${http.url}/status`);
    await page.waitForSelector('body[data-rendered]');
    expect(await page.locator('#chargers-section').isVisible()).toBe(true);
    const row = page.locator('tr[data-charger="CP-DRIVEWAY"]');
    await expect(row.locator('.badge').textContent()).resolves.toBe('connected');
    const text = await row.textContent();
    expect(text).toContain('Alfen Eve Single');
    expect(text).toContain('1: Charging');
    expect(text).toContain(`ocpp:CP-DRIVEWAY:${tx.transactionId}`);
    expect(text).toMatch(/1[.,]85 kWh/);
    // Not connected, in the words and colour of the Health line beside it (ok: grey, not a red "disconnected"), and offered no operation.
    const barn = page.locator('tr[data-charger="CP-BARN"]');
    await expect(barn.locator('.badge').textContent()).resolves.toBe('not connected');
    await expect(barn.locator('.badge').getAttribute('class')).resolves.toBe('badge not-connected');
    expect(await page.locator('#components [data-component="chargers"]').textContent()).toContain('1 of 2 charge point(s) connected');
    await expect(page.locator('#components [data-component="chargers"] .badge').textContent()).resolves.toBe('ok');
    expect(await barn.locator('button').count()).toBe(0);
    expect(await barn.locator('td.operations').textContent()).toBe('none while not connected');
    expect(await row.locator('button[data-operation="reset"]').count()).toBe(1);
    // What it is: firmware from its boot, the feature profiles read after it; each connector with its open transaction.
    await until(async () => (await row.locator('.profiles').count()) === 1 && (await row.locator('.profiles').textContent()) === 'Core, SmartCharging, RemoteTrigger', 'the feature profiles on the page', 30_000);
    expect(await row.locator('.firmware').textContent()).toBe('firmware 6.1.0-4151');
    expect(await row.textContent()).toContain(`1: Charging, transaction ${tx.transactionId}`);
    const metrics = await (await fetch(`${http.url}/metrics`)).text();
    expect(metrics).toContain('metergate_ocpp_charger_info{charge_point_id="CP-DRIVEWAY",vendor="Alfen",model="Eve Single",firmware="6.1.0-4151",ocpp_version="1.6"} 1');
    expect(metrics).toContain('metergate_ocpp_charger_supported_profile{charge_point_id="CP-DRIVEWAY",profile="SmartCharging"} 1');
    expect(metrics).toContain('metergate_ocpp_connector_status{charge_point_id="CP-DRIVEWAY",connector_id="1",status="Charging",error_code="NoError"} 1');
    expect(metrics).toContain(`metergate_ocpp_connector_open_transaction_id{charge_point_id="CP-DRIVEWAY",connector_id="1"} ${tx.transactionId}`);
    expect(metrics).toMatch(/metergate_ocpp_charger_last_message_timestamp_seconds\{charge_point_id="CP-DRIVEWAY"\} \d{10}/);

    // An operation from the page without the token: the API refuses it, nothing reaches the charger.
    const result = page.locator('#operation-result');
    await row.locator('button[data-operation="reset"]').click();
    await until(async () => (await result.getAttribute('data-status')) === '401', 'operation answered 401', 30_000);
    expect(await result.textContent()).toContain('refused (401)');
    // A token of another type: 403.
    await page.fill('#operator-token', http.token('cdrs'));
    await row.locator('button[data-operation="reset"]').click();
    await until(async () => (await result.getAttribute('data-status')) === '403', 'operation answered 403', 30_000);
    expect(resets).toEqual([]);
    // With the operator's token: sent, and the charger's answer shown.
    await page.fill('#operator-token', http.token('cpo'));
    await row.locator('button[data-operation="reset"]').click();
    await until(async () => (await result.getAttribute('data-status')) === '200', 'operation answered 200', 30_000);
    expect(await result.textContent()).toBe('reset CP-DRIVEWAY: {"status":"Accepted"}');
    expect(resets).toEqual([{ type: 'Soft' }]);
    // The charger that is not connected: the API refuses it at once (the page offers no button for it).
    const refused = await fetch(`${http.url}/api/v1/chargers/CP-BARN/reset`, { method: 'POST', headers: { authorization: `Token ${http.token('cpo')}`, 'content-type': 'application/json' }, body: JSON.stringify({ type: 'Soft' }) });
    expect(refused.status).toBe(409);
  });

  it('shows the last session\'s signed meter values outcome, and why when it is not verified', { timeout: 60_000 }, async () => {
    const barn = new RPCClient({ endpoint: `ws://127.0.0.1:${central.port()}`, identity: 'CP-BARN', password: PASSWORD, protocols: ['ocpp1.6'], strictMode: true, reconnect: false } as ClientOptions);
    barn.handle('GetConfiguration', async () => ({ configurationKey: [] }));
    await barn.connect();
    try {
      await barn.call('BootNotification', { chargePointVendor: 'Eich', chargePointModel: 'E1' });
      const startMs = Date.now() - 3_600_000;
      const stopMs = Date.now() - 60_000;
      const tx = (await barn.call('StartTransaction', { connectorId: 1, idTag: 'T', meterStart: 2_000, timestamp: new Date(startMs).toISOString() })) as { transactionId: number };
      const begin = signOcmf(payload('MTR-BARN', 1, [{ atMs: startMs, tx: 'B', wh: 2_000 }]), barnKey);
      // The end document changed after it was signed.
      const end = signOcmf(payload('MTR-BARN', 2, [{ atMs: stopMs, tx: 'E', wh: 9_000 }]), barnKey).replace('"RV":9', '"RV":8');
      await barn.call('MeterValues', { connectorId: 1, transactionId: tx.transactionId, meterValue: [{ timestamp: new Date(startMs).toISOString(), sampledValue: [{ value: begin, format: 'SignedData', context: 'Transaction.Begin' }] }] });
      await barn.call('StopTransaction', { transactionId: tx.transactionId, meterStop: 8_000, timestamp: new Date(stopMs).toISOString(), transactionData: [{ timestamp: new Date(stopMs).toISOString(), sampledValue: [{ value: end, format: 'SignedData', context: 'Transaction.End' }] }] });
      const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
      await page.goto(`${http.url}/status`);
      await page.waitForSelector('body[data-rendered]');
      const signed = page.locator('tr[data-charger="CP-BARN"] .signed-meter');
      await until(async () => (await signed.count()) === 1, 'the signed meter outcome on the page', 30_000);
      expect(await signed.getAttribute('data-outcome')).toBe('signature_invalid');
      expect(await signed.textContent()).toMatch(new RegExp(`transaction ${tx.transactionId}: signature_invalid \\(the Transaction.End document .*does not match`));
      const metrics = await (await fetch(`${http.url}/metrics`)).text();
      expect(metrics).toContain('metergate_signed_meter_sessions_total{outcome="signature_invalid"} 1');
    } finally {
      await barn.close({ force: true });
    }
  });
});
