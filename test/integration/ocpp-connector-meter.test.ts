// A connector measured by a configured meter (chargers[].connector_meters): its charger
// sessions are priced from the meter's stored readings, not the charger's register.
// Real OCPP over ws (strict ocpp-rpc charger), real HTTP, real NL prices; the readings are
// stored as the poller stores them.
import { RPCClient } from 'ocpp-rpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/free-port.js';
import { CentralSystem } from '../../src/ocpp/central-system.js';
import { ReadingsStore } from '../../src/store/readings.js';
import { rawRequest, startTestHttp, type TestHttp } from '../helpers/http.js';
import { loadNl2025Prices } from '../helpers/real-prices.js';
import { hasSharedData } from '../helpers/shared-data.js';

type ClientOptions = ConstructorParameters<typeof RPCClient>[0];
const METER = '6a1f0b8e-2c3d-4e5f-8a9b-0c1d2e3f4a5b';
const PASSWORD = 'meter-test-key-0123456';
const at = (iso: string) => Date.parse(iso);

describe.skipIf(!hasSharedData)('a charger connector measured by a configured meter', () => {
  let http: TestHttp;
  let central: CentralSystem;
  let cp: RPCClient;

  beforeAll(async () => {
    const port = await freePort();
    http = await startTestHttp({
      config: {
        buses: [{ name: 'rs485', type: 'tcp', host: '127.0.0.1' }],
        meters: [{ resource_id: METER, bus: 'rs485', unit_id: 1, profile: 'sdm630' }],
        ocpp: { host: '127.0.0.1', port },
        chargers: [{ id: 'CP-METERED', password: PASSWORD, auth: 'accept_all', connector_meters: { '1': METER } }],
      },
      ctx: { clock: { now: () => at('2026-01-10T12:00:00Z') } },
    });
    loadNl2025Prices(http.ctx.db);
    // The meter at a steady 11 kW, every 10 s, around the session.
    const readings = new ReadingsStore(http.ctx.db);
    for (let t = at('2025-09-30T21:29:50Z'); t <= at('2025-09-30T22:30:10Z'); t += 10_000) {
      readings.insert({ resourceId: METER, sampledAtMs: t, metrics: [{ name: 'active_energy_import', value: 1_000_000 + (11_000 * (t - at('2025-09-30T21:30:00Z'))) / 3_600_000, unit: 'Wh' }] });
    }
    central = new CentralSystem(http.ctx, http.charging);
    await central.start();
    cp = new RPCClient({ endpoint: `ws://127.0.0.1:${central.port()}`, identity: 'CP-METERED', password: PASSWORD, protocols: ['ocpp1.6'], strictMode: true, reconnect: false } as ClientOptions);
    await cp.connect();
  });
  afterAll(async () => {
    await cp?.close({ force: true });
    await central?.stop();
    await http?.close();
  });

  it("prices connector 1 from the meter's readings (the charger's register says otherwise)", async () => {
    const token = http.token('cdrs');
    const started = (await cp.call('StartTransaction', { connectorId: 1, idTag: 'T', meterStart: 0, timestamp: '2025-09-30T21:30:00Z' })) as { transactionId: number };
    // The charger's own register claims 20 kWh; the meter measured 11 kWh.
    await cp.call('StopTransaction', { transactionId: started.transactionId, meterStop: 20_000, timestamp: '2025-09-30T22:30:00Z' });
    const res = await rawRequest(`${http.url}/api/v1/cdrs/ocpp:CP-METERED:${started.transactionId}`, { method: 'GET', headers: { authorization: `Token ${token}` } });
    const body = (await res.json()) as Record<string, unknown>;
    expect(res.status, JSON.stringify(body)).toBe(200);
    // 5.5 kWh x 90.00 + 2.75 x 102.6 + 2.75 x 92.2 EUR/MWh (real NL prices).
    expect(body).toMatchObject({ currency: 'EUR', total_cost: { excl_vat: 1.0307 } });
    const session = http.ctx.db.prepare('SELECT resource_id, readings_json FROM sessions WHERE cpo_transaction_id = ?').get(`ocpp:CP-METERED:${started.transactionId}`);
    expect(session).toEqual({ resource_id: METER, readings_json: null });
  });
});
