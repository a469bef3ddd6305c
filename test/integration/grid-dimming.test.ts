// §14a EnWG dimming end to end (docs/grid-limits.md): a running gateway reads a simulated
// control box, a Modbus TCP I/O module (Debian's python3-pymodbus, test/helpers/control-box.py)
// whose discrete input 0 is the relay contact; three strict ocpp-rpc chargers charge under
// TxProfiles behind the simulated SDM630 site meter (test/helpers/site-gateway.ts, real NL
// prices of 2025-05-11). Closing the contact dims the three to P_min,14a of three devices
// behind one energy manager (4.2 kW + 2 x 0.75 x 4.2 kW = 10.5 kW = 15.21 A per phase at
// 3 x 230 V), shared by the fuse controller's rule: the two earliest departures get their
// minimum and the rest equally, the third waits (not first come, first served: the earliest
// departure starts last). Each lowering reaches the wire and is confirmed; the event is stored
// with every connector's limit in force and confirmation, on /status.json, /metrics and the
// export (JSON and CSV). Opening the contact ends it and the chargers are raised back to their
// plans after the raise interval. A control box that stops answering dims again (on_signal_lost: dim).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/free-port.js';
import type { SentProfile } from '../helpers/ocpp-charger.js';
import { expectDocumented } from '../helpers/openapi.js';
import { hasPymodbus } from '../helpers/peers.js';
import { seriesValue } from '../helpers/prom-text.js';
import { hasSharedData, SKIP_REASON } from '../helpers/shared-data.js';
import { connectSiteCharger, startSiteGateway, type SiteCharger, type SiteGateway } from '../helpers/site-gateway.js';
import { until } from '../helpers/wait.js';

const PASSWORD = 'charger-secret-0123456789';
const SITE_METER = '0c9a7e51-2f3b-4d6a-8e1c-5b7d9f2a4c60';
const IDS = ['CP-A', 'CP-B', 'CP-C'] as const;
// CP-A starts first and leaves last: under the dimmed limit it waits.
const DEPARTURE = { 'CP-A': '2025-05-11T18:00:00Z', 'CP-B': '2025-05-11T17:00:00Z', 'CP-C': '2025-05-11T16:00:00Z' } as const;
const DIMMED_A = 15.21;
const RAISE_INTERVAL_S = 5;
const DEADLINE_S = 30;

const maxLimit = (p: SentProfile) => Math.max(...p.csChargingProfiles.chargingSchedule.chargingSchedulePeriod.map((x) => x.limit));
const runsHere = hasSharedData && hasPymodbus();

describe.skipIf(!runsHere)(`§14a dimming through a Modbus control box, shared over three chargers${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let gw: SiteGateway;
  let box: ChildProcessWithoutNullStreams;
  const boxLines: string[] = [];
  const chargers = new Map<string, SiteCharger>();

  const setContact = async (bits: string) => {
    const before = boxLines.length;
    box.stdin.write(`${bits}\n`);
    await until(() => boxLines.slice(before).includes(`set ${bits}`), `the control box set ${bits}`);
    return Date.now();
  };
  const get = async (path: string) => fetch(`http://127.0.0.1:${gw.httpPort}${path}`, { headers: { authorization: `Token ${gw.cpoToken}` } });
  /** The SetChargingProfile requests a charger received, with when. */
  const profilesOf = (id: string) => chargers.get(id)!.received.filter((r) => r.action === 'SetChargingProfile').map((r) => ({ profile: r.params as SentProfile, atMs: r.atMs }));
  const lastTx = (id: string) => [...profilesOf(id)].reverse().find((p) => p.profile.csChargingProfiles.chargingProfilePurpose === 'TxProfile');

  beforeAll(async () => {
    const boxPort = await freePort();
    box = spawn('/usr/bin/python3', [join(__dirname, '../helpers/control-box.py'), String(boxPort)]);
    createInterface({ input: box.stdout }).on('line', (l) => void boxLines.push(l));
    await until(() => boxLines.includes(`ready ${boxPort}`), 'the control box listening', 20_000);
    const dir = mkdtempSync(join(tmpdir(), 'mg-grid-dimming-'));
    gw = await startSiteGateway({
      dir,
      siteMeter: SITE_METER,
      site: { limit_a: 63, meter_includes_chargers: false, raise_interval_s: RAISE_INTERVAL_S, raise_hysteresis_a: 1, max_reading_age_s: 15 },
      chargers: IDS.map((id) => ({ id, password: PASSWORD, auth: 'accept_all', connectors: [{ connector_id: 1, max_current_a: 16, min_current_a: 6, phases: 3, default_target: { departure_local_time: '18:00', energy_wh: 30000 } }] })),
      extraBuses: [{ name: 'io', type: 'tcp', host: '127.0.0.1', tcp_port: boxPort, timeout_ms: 500, retries: 0 }],
      extraConfig: { grid_control: { input: { type: 'modbus', bus: 'io', unit_id: 1, addresses: [0], poll_ms: 200, debounce_ms: 100 }, reaction_deadline_s: DEADLINE_S } },
    });
    for (const id of IDS) chargers.set(id, await connectSiteCharger(gw, id, PASSWORD));
  }, 120_000);

  afterAll(async () => {
    for (const c of chargers.values()) await c.client.close({ force: true }).catch(() => undefined);
    await gw?.stop();
    if (box && box.exitCode === null) box.kill('SIGKILL');
  });

  it('dims, shares fairly, confirms, ends and dims again when the box falls silent', { timeout: 120_000 }, async () => {
    // Not dimmed: the contact reads open.
    await until(async () => ((await (await get('/status.json')).json()) as any).grid_control?.signal === 'read', 'the contact read');
    for (const id of IDS) {
      const res = await fetch(`http://127.0.0.1:${gw.httpPort}/api/v1/chargers/${id}/connectors/1/plan`, {
        method: 'PUT',
        headers: { authorization: `Token ${gw.cpoToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ departure_time: DEPARTURE[id], energy_wh: 60_000 }),
      });
      expect(res.status).toBe(201);
      await chargers.get(id)!.client.call('StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: 0, timestamp: new Date(gw.now()).toISOString() });
    }
    // Undimmed, each charges at its maximum (the 63 A site leaves every one its 16 A).
    await until(() => IDS.every((id) => lastTx(id) !== undefined && maxLimit(lastTx(id)!.profile) >= 15), 'every charger at its maximum', 60_000);
    const before = new Map(IDS.map((id) => [id, profilesOf(id).length]));

    // Dim: the relay closes.
    const dimmedAtMs = await setContact('1');
    await until(() => IDS.every((id) => profilesOf(id).length > before.get(id)!), 'a lowering on every charger', DEADLINE_S * 1000);
    const lowered = new Map(IDS.map((id) => [id, profilesOf(id)[before.get(id)!]!]));
    const wireMs = IDS.map((id) => lowered.get(id)!.atMs - dimmedAtMs).sort((a, b) => a - b);
    console.log(`grid dimming: contact closed -> lowering on the wire: ${wireMs.join(', ')} ms (3 chargers)`);
    const limits = Object.fromEntries(IDS.map((id) => [id, maxLimit(lastTx(id)!.profile)]));
    // Together within the dimmed current; the two earliest departures charge on equal shares, the latest waits.
    expect(limits['CP-A']! + limits['CP-B']! + limits['CP-C']!).toBeLessThanOrEqual(DIMMED_A + 0.01);
    expect(limits['CP-A']).toBe(0);
    expect(limits['CP-B']).toBeGreaterThanOrEqual(6);
    expect(limits['CP-B']).toBeCloseTo(limits['CP-C']!, 1);

    // Confirmed and stored: every connector's limit in force, within its share.
    let status: any;
    await until(async () => {
      status = await (await get('/status.json')).json();
      return status.grid_control?.event?.confirmed_at !== null && status.grid_control?.event?.connectors.length === 3;
    }, 'the dimming event confirmed', DEADLINE_S * 1000);
    const event = status.grid_control.event;
    expect(status.grid_control).toMatchObject({ dimmed: true, limit_w: 10500, minimum_w: 10500, signal: 'read', contacts: [true] });
    expect(event).toMatchObject({ cause: 'signal', late: false });
    for (const c of event.connectors) expect(c.in_force_a).toBeLessThanOrEqual(c.share_a + 0.01);
    const confirmMs = Date.parse(event.confirmed_at) - Date.parse(event.started_at);
    console.log(`grid dimming: event started -> every connector confirmed: ${confirmMs} ms (gateway clock)`);
    expect(confirmMs).toBeLessThanOrEqual(DEADLINE_S * 1000);

    // The plan says why its share is what it is.
    const planRes = await get('/api/v1/chargers/CP-B/connectors/1/plan');
    const plan = (await planRes.json()) as any;
    expectDocumented('GET', '/api/v1/chargers/{charge_point_id}/connectors/{connector_id}/plan', planRes, plan);
    expect(plan.site_share.dimmed).toMatchObject({ limit_w: 10500, fixed_loads_w: 0, chargers_a: DIMMED_A });
    expect(plan.site_share.share_a).toBe(plan.site_share.dimmed.share_a);

    // The status page's first HTML holds the event with each connector.
    const page = await (await fetch(`http://127.0.0.1:${gw.httpPort}/status`)).text();
    expect(page).toContain('Grid operator dimming (§14a)');
    for (const id of IDS) expect(page).toContain(`data-grid-connector="${id}/1"`);
    expect(page).toContain('every connector confirmed');

    const metrics = await (await fetch(`http://127.0.0.1:${gw.httpPort}/metrics`)).text();
    expect(seriesValue(metrics, 'metergate_grid_dimmed')).toBe(1);
    expect(seriesValue(metrics, 'metergate_grid_dimmed_limit_watts')).toBe(10500);
    expect(seriesValue(metrics, 'metergate_grid_dimming_events_total', { cause: 'signal' })).toBe(1);

    // End: the relay opens; back to the plans after the raise interval.
    const endedAtMs = await setContact('0');
    await until(() => IDS.every((id) => maxLimit(lastTx(id)!.profile) >= 15), 'every charger back at its maximum', 60_000);
    const raisedAfterMs = Math.max(...IDS.map((id) => lastTx(id)!.atMs)) - endedAtMs;
    console.log(`grid dimming: contact opened -> last charger raised: ${raisedAfterMs} ms (raise interval ${RAISE_INTERVAL_S} s)`);

    // The export for the grid operator: JSON and CSV, the event ended, its connectors confirmed.
    const exported = await get('/api/v1/grid/dimming_events');
    const json = (await exported.json()) as any;
    expectDocumented('GET', '/api/v1/grid/dimming_events', exported, json);
    expect(json.events).toHaveLength(1);
    expect(json.events[0]).toMatchObject({ limit_w: 10500, cause: 'signal', contacts: [true], late: false });
    expect(json.events[0].ended_at).not.toBeNull();
    expect(json.events[0].connectors.map((c: any) => c.charge_point_id).sort()).toEqual([...IDS]);
    const csvRes = await get('/api/v1/grid/dimming_events?format=csv');
    expect(csvRes.headers.get('content-type')).toContain('text/csv');
    const csv = (await csvRes.text()).trim().split('\r\n');
    expect(csv[0]).toBe('event_id,started_at,ended_at,limit_w,cause,contacts,confirmed_at,late,charge_point_id,connector_id,share_a,in_force_a,connector_confirmed_at');
    expect(csv).toHaveLength(4);
    expect((await fetch(`http://127.0.0.1:${gw.httpPort}/api/v1/grid/dimming_events`)).status).toBe(401);

    // The control box stops answering: the signal is lost and the chargers are dimmed again (on_signal_lost: dim).
    const beforeLost = new Map(IDS.map((id) => [id, profilesOf(id).length]));
    box.kill('SIGKILL');
    await until(async () => {
      const s = (await (await get('/status.json')).json()) as any;
      return s.grid_control.signal === 'lost' && s.grid_control.dimmed && s.grid_control.event?.cause === 'signal-lost';
    }, 'dimmed on the lost signal', 30_000);
    await until(() => (['CP-B', 'CP-C'] as const).every((id) => profilesOf(id).length > beforeLost.get(id)! && maxLimit(lastTx(id)!.profile) < 8), 'lowered again', 30_000);
    const health = await (await fetch(`http://127.0.0.1:${gw.httpPort}/healthz`)).json();
    expect(JSON.stringify(health)).toContain('control box contacts cannot be read');
  });
});
