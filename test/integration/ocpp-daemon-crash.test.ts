// `metergate run` as its own process with chargers from a YAML config (password_file), a
// strict ocpp-rpc charger, and a crash (SIGKILL) in the middle of a session: what was
// answered was committed, a StartTransaction repeated after the restart gets the same
// transaction, and the session is priced once the charger stops it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RPCClient } from 'ocpp-rpc';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/free-port.js';
import { databasePath, openDaemonDatabase } from '../../src/store/db.js';
import { TokenStore } from '../../src/store/tokens.js';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { loadNl2025Prices } from '../helpers/real-prices.js';
import { hasSharedData } from '../helpers/shared-data.js';

type ClientOptions = ConstructorParameters<typeof RPCClient>[0];
const PASSWORD = 'garage-key-0123456789';

describe.skipIf(!hasSharedData)('metergate run with chargers: a gateway crash mid-session', () => {
  const dir = mkdtempSync(join(tmpdir(), 'metergate-ocpp-crash-'));
  let daemon: DaemonProcess | undefined;
  const clients: RPCClient[] = [];
  afterAll(async () => {
    for (const c of clients) await c.close({ force: true }).catch(() => undefined);
    await daemon?.kill9();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers only what it committed: the same transaction after a restart, priced once stopped', { timeout: 120_000 }, async () => {
    const dataDir = join(dir, 'data');
    mkdirSync(dataDir);
    // Real prices and a cdrs token in the gateway's own file before it starts.
    const db = openDaemonDatabase(databasePath(dataDir));
    expect(loadNl2025Prices(db)).toBeGreaterThan(10_000);
    const token = new TokenStore(db).create({ name: 'test', type: 'cdrs', nowMs: Date.now() }).token;
    db.close();
    const [ocppPort, httpPort] = [await freePort(), await freePort()];
    writeFileSync(join(dir, 'cp-key'), `${PASSWORD}\n`);
    const config = join(dir, 'config.yaml');
    writeFileSync(
      config,
      [
        'organization_id: 3f2504e0-4f89-41d3-9a0c-0305e82c3301',
        `data_dir: ${dataDir}`,
        'log_level: info',
        `http: { port: ${httpPort} }`,
        'prices: { regions: [NL], source: none }',
        'forecast: { enabled: false }',
        `ocpp: { host: 127.0.0.1, port: ${ocppPort} }`,
        'chargers:',
        '  - id: CP-GARAGE-1',
        `    password_file: ${join(dir, 'cp-key')}`,
        '    auth: { id_tags: [04A1B2C3D4] }',
        '',
      ].join('\n'),
    );
    const connect = async () => {
      const cp = new RPCClient({ endpoint: `ws://127.0.0.1:${ocppPort}`, identity: 'CP-GARAGE-1', password: PASSWORD, protocols: ['ocpp1.6'], strictMode: true, reconnect: false } as ClientOptions);
      clients.push(cp);
      await cp.connect();
      return cp;
    };
    const cdr = async (id: string) => {
      const res = await fetch(`http://127.0.0.1:${httpPort}/api/v1/cdrs/${id}`, { headers: { authorization: `Token ${token}` } });
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    };

    daemon = await startDaemon(config);
    let cp = await connect();
    expect(await cp.call('BootNotification', { chargePointVendor: 'Alfen', chargePointModel: 'Eve Single' })).toMatchObject({ status: 'Accepted' });
    const start = { connectorId: 1, idTag: '04A1B2C3D4', meterStart: 1000, timestamp: '2025-09-30T21:30:00Z' };
    const started = (await cp.call('StartTransaction', start)) as { transactionId: number; idTagInfo: { status: string } };
    expect(started.idTagInfo.status).toBe('Accepted');
    await cp.call('MeterValues', { connectorId: 1, transactionId: started.transactionId, meterValue: [{ timestamp: '2025-09-30T22:00:00Z', sampledValue: [{ value: '6500' }] }] });
    const id = `ocpp:CP-GARAGE-1:${started.transactionId}`;
    expect((await cdr(id)).status).toBe(409);

    // A crash: no shutdown code runs.
    await daemon.kill9();
    daemon = await startDaemon(config);
    cp = await connect();
    // The charger did not trust the lost connection and sends its StartTransaction again.
    const again = (await cp.call('StartTransaction', start)) as { transactionId: number };
    expect(again.transactionId).toBe(started.transactionId);
    await cp.call('MeterValues', { connectorId: 1, transactionId: started.transactionId, meterValue: [{ timestamp: '2025-09-30T22:15:00Z', sampledValue: [{ value: '9250' }] }] });
    expect(await cp.call('StopTransaction', { transactionId: started.transactionId, meterStop: 12000, timestamp: '2025-09-30T22:30:00Z', idTag: '04A1B2C3D4' })).toEqual({ idTagInfo: { status: 'Accepted' } });
    const priced = await cdr(id);
    expect(priced.status, JSON.stringify(priced.body)).toBe(200);
    // 5.5 kWh x 90.00 + 2.75 x 102.6 + 2.75 x 92.2 EUR/MWh (real NL prices, docs/chargers.md).
    expect(priced.body).toMatchObject({ currency: 'EUR', total_cost: { excl_vat: 1.0307 } });
    await cp.close();
    expect(await daemon.stop()).toBe(0);
    expect(daemon.output()).not.toContain(PASSWORD);
    expect(daemon.output()).toContain('StartTransaction repeated');
  });
});
