// A P1 smart meter as the site meter (issue 25): the running gateway (Daemon with its real
// modules) reads a simulated DSMR 5 meter replaying the recorded ../shared/data/dsmr/v5.txt on a
// socat pty; its per-phase power (active_power_l1..l3) over each phase's voltage is the site's
// load per phase in the plan (per_phase: phase-powers), not its whole-ampere currents.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MeterSample } from '../../src/domain.js';
import { expectDocumented } from '../helpers/openapi.js';
import { hasSocat } from '../helpers/peers.js';
import { hasSharedData, sharedData } from '../helpers/shared-data.js';
import { startSiteGateway, type SiteGateway } from '../helpers/site-gateway.js';
import { until } from '../helpers/wait.js';

const PLAN_PATH = '/api/v1/chargers/{charge_point_id}/connectors/{connector_id}/plan';
const SITE_METER = 'c4b1a7e3-6d2f-4a8b-9e3c-9f5d7b2a1f66';

describe.skipIf(!hasSharedData || !hasSocat)('a P1 smart meter as the site meter', () => {
  let gw: SiteGateway;
  const samples: MeterSample[] = [];

  beforeAll(async () => {
    gw = await startSiteGateway({
      dir: mkdtempSync(join(tmpdir(), 'mg-site-p1-')),
      siteMeter: SITE_METER,
      p1Telegram: sharedData('dsmr/v5.txt'),
      site: { limit_a: 25, meter_includes_chargers: false, max_reading_age_s: 30 },
      chargers: [{ id: 'CP-P1', password: 'charger-secret-0123456789', auth: 'accept_all', connectors: [{ connector_id: 1 }] }],
      beforeStart: (ctx) => ctx.events.on('sample.taken', (s) => void samples.push(s)),
    });
  }, 120_000);

  afterAll(async () => {
    await gw?.stop();
  });

  async function plan(method: 'GET' | 'PUT', body?: unknown): Promise<{ status: number; body: any }> {
    const res = await fetch(`http://127.0.0.1:${gw.httpPort}/api/v1/chargers/CP-P1/connectors/1/plan`, {
      method,
      headers: { authorization: `Token ${gw.cpoToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await res.json();
    expectDocumented(method, PLAN_PATH, res, json);
    return { status: res.status, body: json };
  }

  it("plans on the P1 meter's per-phase power over each phase's voltage", { timeout: 120_000 }, async () => {
    await until(() => samples.filter((s) => s.resourceId === SITE_METER).length >= 2, 'two samples of the P1 site meter', 60_000);
    expect((await plan('PUT', { departure_time: '2025-05-11T16:00:00Z', energy_wh: 30_000 })).status).toBe(201);
    const got = await plan('GET');
    expect(got.status).toBe(200);
    const m = got.body.site_meter;
    expect(m).toMatchObject({ resource_id: SITE_METER, state: 'measured', assumed: false, per_phase: 'phase-powers' });
    const used = samples.find((s) => s.resourceId === SITE_METER && [new Date(s.sampledAtMs).toISOString(), new Date(s.sampledAtMs).toISOString().replace('.000Z', 'Z')].includes(m.sampled_at));
    expect(used, `sample at ${m.sampled_at}`).toBeDefined();
    const value = (name: string) => used!.metrics.find((x) => x.name === name)!.value;
    // The recorded telegram: 70, 32 and 142 W on L1..L3 at 230, 230 and 229 V; a drawing phase
    // counts the larger of its measured current and P/V.
    const loadA = [1, 2, 3].map((p) => Math.max(value(`current_l${p}`), value(`active_power_l${p}`) / value(`voltage_l${p}`)));
    expect(m.meter_load_a).toEqual(loadA.map((a) => Math.round(a * 100) / 100));
    expect(m.other_load_a).toBe(Math.ceil(Math.max(...loadA) * 100 - 1e-6) / 100);
    expect(got.body.site).toEqual({ limit_a: 25, other_load_a: m.other_load_a });
  });
});
