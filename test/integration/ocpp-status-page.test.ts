// The status page's Chargers section in a real browser (Debian's chromium via
// playwright-core): a strict ocpp-rpc charger connected over ws with an open session,
// another configured charger that is not connected.
import { chromium, type Browser } from 'playwright-core';
import { RPCClient } from 'ocpp-rpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/free-port.js';
import { CentralSystem } from '../../src/ocpp/central-system.js';
import { startTestHttp, type TestHttp } from '../helpers/http.js';
import { chromiumPath } from '../helpers/peers.js';

type ClientOptions = ConstructorParameters<typeof RPCClient>[0];
const CHROMIUM = chromiumPath();
const PASSWORD = 'status-page-key-0123456';

describe.skipIf(!CHROMIUM)('status page: chargers', () => {
  let http: TestHttp;
  let central: CentralSystem;
  let cp: RPCClient;
  let browser: Browser;

  beforeAll(async () => {
    http = await startTestHttp({
      config: {
        prices: { regions: ['NL'], source: 'none' },
        ocpp: { host: '127.0.0.1', port: await freePort() },
        chargers: [
          { id: 'CP-DRIVEWAY', password: PASSWORD, auth: 'accept_all' },
          { id: 'CP-BARN', password: PASSWORD, auth: 'accept_all' },
        ],
      },
    });
    central = new CentralSystem(http.ctx, http.charging);
    http.ctx.probes.observe([central]);
    await central.start();
    cp = new RPCClient({ endpoint: `ws://127.0.0.1:${central.port()}`, identity: 'CP-DRIVEWAY', password: PASSWORD, protocols: ['ocpp1.6'], strictMode: true, reconnect: false } as ClientOptions);
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

  it('shows each configured charger, connected or not, its connectors and its open session with the energy so far', async () => {
    await cp.call('BootNotification', { chargePointVendor: 'Alfen', chargePointModel: 'Eve Single' });
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
    await expect(page.locator('tr[data-charger="CP-BARN"] .badge').textContent()).resolves.toBe('disconnected');
    expect(await page.locator('#components [data-component="chargers"]').textContent()).toContain('1 of 2 charge point(s) connected');
  });
});
