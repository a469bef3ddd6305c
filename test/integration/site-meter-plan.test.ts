// The site limit counts the site meter's other load (issue 13 point 3): a running gateway
// (Daemon with its real modules) polls the Modbus simulator (an SDM630 with per-phase
// currents) over a socat pty pair; config site.meter names that meter, so every plan takes
// the meter's latest reading (followed on the event bus) as the other load, less the
// connector's own draw that a strict ocpp-rpc charger reports (Current.Import per phase).
// When the meter stops answering, its reading goes stale and the plan falls back to the
// charger's minimum current and says so. Real NL prices of 2025-05-11; the gateway's clock
// runs from 2025-05-11 06:20Z at real speed (the poller's timers are real).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RPCClient } from 'ocpp-rpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MeterSample } from '../../src/domain.js';
import { expectDocumented } from '../helpers/openapi.js';
import { hasSharedData, SKIP_REASON } from '../helpers/shared-data.js';
import type { SimProcess } from '../helpers/sim-process.js';
import { startSiteGateway, type SiteGateway } from '../helpers/site-gateway.js';
import { until } from '../helpers/wait.js';

type ClientOptions = ConstructorParameters<typeof RPCClient>[0];
const PASSWORD = 'charger-secret-0123456789';
const PLAN_PATH = '/api/v1/chargers/{charge_point_id}/connectors/{connector_id}/plan';
const MAX_AGE_S = 4;
/** resource_ids are UUIDs (the contract's). */
const SITE_METER = 'b3a0f6d2-5c1e-4f7a-9d2b-8e4c6a1f0e55';

describe.skipIf(!hasSharedData)(`plans take the site meter's reading as the other load${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let gw: SiteGateway;
  let sim: SimProcess;
  let httpPort: number;
  let cpoToken: string;
  let charger: RPCClient | undefined;
  const samples: MeterSample[] = [];
  let now: () => number;

  beforeAll(async () => {
    gw = await startSiteGateway({
      dir: mkdtempSync(join(tmpdir(), 'mg-site-meter-')),
      siteMeter: SITE_METER,
      site: { limit_a: 25, meter_includes_chargers: true, max_reading_age_s: MAX_AGE_S },
      chargers: [{ id: 'CP-SITE', password: PASSWORD, auth: 'accept_all', connectors: [{ connector_id: 1 }] }],
      // What the poller told the bus, to check the plan against the very reading it used.
      beforeStart: (ctx) => ctx.events.on('sample.taken', (s) => void samples.push(s)),
    });
    ({ sim, httpPort, cpoToken, now } = gw);
    charger = new RPCClient({ endpoint: `ws://127.0.0.1:${gw.ocppPort}`, identity: 'CP-SITE', password: PASSWORD, protocols: ['ocpp1.6'], strictMode: true, reconnect: false } as ClientOptions);
    charger.handle('SetChargingProfile', async () => ({ status: 'Accepted' }));
    await charger.connect();
    await charger.call('BootNotification', { chargePointVendor: 'Alfen', chargePointModel: 'Eve Single' });
  }, 120_000);

  afterAll(async () => {
    await charger?.close({ force: true }).catch(() => undefined);
    await gw?.stop();
  });

  async function plan(method: 'GET' | 'PUT', body?: unknown): Promise<{ status: number; body: any }> {
    const res = await fetch(`http://127.0.0.1:${httpPort}/api/v1/chargers/CP-SITE/connectors/1/plan`, {
      method,
      headers: { authorization: `Token ${cpoToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await res.json();
    expectDocumented(method, PLAN_PATH, res, json);
    return { status: res.status, body: json };
  }

  const ofSite = () => samples.filter((s) => s.resourceId === SITE_METER);
  const current = (s: MeterSample, phase: number) => s.metrics.find((m) => m.name === `current_l${phase}`)!.value;
  const round2 = (v: number) => Math.round(v * 100) / 100;

  it('plans on the site meter\'s latest per-phase currents less the connector\'s own draw', { timeout: 120_000 }, async () => {
    await until(() => ofSite().length >= 2, 'two polls of the site meter');
    const put = await plan('PUT', { departure_time: '2025-05-11T16:00:00Z', energy_wh: 30_000 });
    expect(put.status).toBe(201);
    // The client sent no site: the configured limit (25 A) applies, less what the meter measures.
    const { transactionId } = (await charger!.call('StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: 0, timestamp: new Date(now()).toISOString() })) as { transactionId: number };
    const drawA = [0.5, 0.25, 0.25];
    await charger!.call('MeterValues', {
      connectorId: 1,
      transactionId,
      meterValue: [{ timestamp: new Date(now()).toISOString(), sampledValue: drawA.map((a, i) => ({ value: String(a), measurand: 'Current.Import', unit: 'A', phase: `L${i + 1}` })) }],
    });
    const got = await plan('GET');
    expect(got.status).toBe(200);
    const m = got.body.site_meter;
    expect(m).toMatchObject({ resource_id: SITE_METER, state: 'measured', assumed: false, per_phase: 'currents', own_draw_a: drawA, note: null });
    // The reading used is one the poller put on the bus, and the other load follows from it.
    const used = ofSite().find((s) => new Date(s.sampledAtMs).toISOString().replace('.000Z', 'Z') === m.sampled_at || new Date(s.sampledAtMs).toISOString() === m.sampled_at);
    expect(used, `sample at ${m.sampled_at} among ${ofSite().length} of the site meter`).toBeDefined();
    const meterA = [1, 2, 3].map((p) => current(used!, p));
    expect(m.meter_load_a).toEqual(meterA.map(round2));
    // Rounded up to a hundredth: the other load counts too high, never too low.
    const other = Math.ceil(Math.max(0, ...meterA.map((a, i) => a - drawA[i])) * 100 - 1e-6) / 100;
    expect(m.other_load_a).toBe(other);
    expect(other).toBeGreaterThan(0);
    expect(got.body.site).toEqual({ limit_a: 25, other_load_a: other });
    expect(got.body.allowed_current_a).toBeCloseTo(Math.min(16, 25 - other), 2);
  });

  it('a client that says more other load than measured is believed (never less), and never a limit above site.limit_a', { timeout: 60_000 }, async () => {
    const put = await plan('PUT', { departure_time: '2025-05-11T16:00:00Z', energy_wh: 30_000, site: { limit_a: 32, other_load_a: 15 } });
    expect(put.body.ceilings_applied).toEqual([{ field: 'site.limit_a', requested: 32, applied: 25, setting: 'site.limit_a' }]);
    // A reading within max_reading_age_s (on a busy machine a poll can be late for a moment).
    let got = await plan('GET');
    await until(async () => (got = await plan('GET')).body.site_meter.state === 'measured', 'a fresh site meter reading', 60_000);
    expect(got.body.site).toEqual({ limit_a: 25, other_load_a: 15 });
    expect(got.body.allowed_current_a).toBe(10);
  });

  it('when the meter stops answering its reading goes stale: the plan takes the minimum current and says so', { timeout: 120_000 }, async () => {
    await plan('PUT', { departure_time: '2025-05-11T16:00:00Z', energy_wh: 30_000 });
    await sim.kill();
    const lastMs = Math.max(...ofSite().map((s) => s.sampledAtMs));
    await until(() => now() > lastMs + MAX_AGE_S * 1000 + 500, 'the last reading to age past site.max_reading_age_s');
    const got = await plan('GET');
    expect(got.body.site_meter).toMatchObject({ state: 'stale', assumed: true, meter_load_a: null, other_load_a: 19 });
    expect(got.body.site_meter.note).toMatch(new RegExp(`site meter ${SITE_METER} was last read \\d+ s ago \\(more than ${MAX_AGE_S} s\\)`));
    expect(got.body.allowed_current_a).toBe(6);
    expect(got.body.site).toEqual({ limit_a: 25, other_load_a: 19 });
  });
});
