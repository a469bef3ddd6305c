// The site limit protects the main fuse while chargers charge (docs/planning.md "When the
// site's load changes"): a running gateway polls the Modbus simulator (an SDM630 with
// per-phase currents) over a socat pty pair as the site meter; two strict ocpp-rpc chargers
// charge under TxProfiles. The test sets the site's other load through the simulator's
// --load-file. When it rises so that the chargers' allowed currents no longer fit under the
// limit, both are lowered on that very reading (shared equally); while it stays high
// nothing more is sent; when it falls they are raised again, but not before
// site.raise_interval_s; when the meter falls silent, the plans fall back to the minimum
// current (the earlier departure charges, the other waits). Real NL prices of 2025-05-11;
// the gateway's clock runs from 06:20Z at real speed (the poller's timers are real).
// First, two cars charging with no target (docs/planning.md "Cars without a target"): left
// alone while the site has room for both at their chargers' maximum, lowered fairly on a load
// step, raised back once the load falls.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MeterSample } from '../../src/domain.js';
import type { Events } from '../../src/events.js';
import type { SentProfile } from '../helpers/ocpp-charger.js';
import { expectDocumented } from '../helpers/openapi.js';
import { hasSharedData, SKIP_REASON } from '../helpers/shared-data.js';
import type { SimProcess } from '../helpers/sim-process.js';
import { connectSiteCharger, startSiteGateway, type SiteCharger, type SiteGateway } from '../helpers/site-gateway.js';
import { until } from '../helpers/wait.js';

const PASSWORD = 'charger-secret-0123456789';
const PLAN_PATH = '/api/v1/chargers/{charge_point_id}/connectors/{connector_id}/plan';
const SITE_METER = '6f1c2a9e-3b7d-4e58-a1c4-9d2e7b5f0c31';
const LIMIT_A = 25;
const RAISE_INTERVAL_S = 6;
const HYSTERESIS_A = 2;
const MAX_AGE_S = 15;
const IDS = ['CP-EARLY', 'CP-LATE'] as const;
/** Chargers whose cars get no target: 10 A each, so both fit beside the low load at their maximum. */
const FREE = ['CP-FREE-1', 'CP-FREE-2'] as const;
const FREE_MAX_A = 10;
const DEPARTURE = { 'CP-EARLY': '2025-05-11T16:00:00Z', 'CP-LATE': '2025-05-11T18:00:00Z' } as const;

const maxLimit = (p: SentProfile) => Math.max(...p.csChargingProfiles.chargingSchedule.chargingSchedulePeriod.map((x) => x.limit));

describe.skipIf(!hasSharedData)(`chargers follow the site meter's load under the site limit${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let gw: SiteGateway;
  let sim: SimProcess;
  let loadFile: string;
  let httpPort: number;
  let cpoToken: string;
  const chargers = new Map<string, SiteCharger>();
  const samples: MeterSample[] = [];
  /** plan.updated (reason site-load) with the number of site meter samples seen when it was told. */
  const siteUpdates: Array<{ e: Events['plan.updated']; samplesSeen: number; atMs: number }> = [];
  let now: () => number;

  const setLoadW = (w: number) => writeFileSync(loadFile, String(w));
  const ofSite = () => samples.filter((s) => s.resourceId === SITE_METER);
  const highestPhaseA = (s: MeterSample) => Math.max(...[1, 2, 3].map((p) => s.metrics.find((m) => m.name === `current_l${p}`)!.value));

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mg-site-load-'));
    loadFile = join(dir, 'load-w');
    setLoadW(3000);
    gw = await startSiteGateway({
      dir,
      siteMeter: SITE_METER,
      simArgs: ['--load-file', loadFile],
      // The meter measures the rest of the site (the chargers are wired after it).
      site: { limit_a: LIMIT_A, meter_includes_chargers: false, max_reading_age_s: MAX_AGE_S, raise_interval_s: RAISE_INTERVAL_S, raise_hysteresis_a: HYSTERESIS_A },
      chargers: [
        ...IDS.map((id) => ({ id, password: PASSWORD, auth: 'accept_all' as const, connectors: [{ connector_id: 1 }] })),
        ...FREE.map((id) => ({ id, password: PASSWORD, auth: 'accept_all' as const, connectors: [{ connector_id: 1, max_current_a: FREE_MAX_A, min_current_a: 6 }] })),
      ],
      // Subscribed before the daemon wires its modules: a sample is counted before the site follower hears it.
      beforeStart: (ctx, clock) => {
        ctx.events.on('sample.taken', (s) => void samples.push(s));
        ctx.events.on('plan.updated', (e) => {
          if (e.reason === 'site-load') siteUpdates.push({ e, samplesSeen: ofSite().length, atMs: clock() });
        });
      },
    });
    ({ sim, httpPort, cpoToken, now } = gw);
    for (const id of [...IDS, ...FREE]) chargers.set(id, await connectSiteCharger(gw, id, PASSWORD));
  }, 120_000);

  afterAll(async () => {
    for (const c of chargers.values()) await c.client.close({ force: true }).catch(() => undefined);
    await gw?.stop();
  });

  async function api(method: 'GET' | 'PUT', id: string, body?: unknown): Promise<{ status: number; body: any }> {
    const res = await fetch(`http://127.0.0.1:${httpPort}/api/v1/chargers/${id}/connectors/1/plan`, {
      method,
      headers: { authorization: `Token ${cpoToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await res.json();
    expectDocumented(method, PLAN_PATH, res, json);
    return { status: res.status, body: json };
  }

  const lastTx = (id: string) => [...chargers.get(id)!.profiles()].reverse().find((p) => p.csChargingProfiles.chargingProfilePurpose === 'TxProfile');
  /** Both chargers hold a TxProfile that the gateway stored as accepted, and it is the newest each received. */
  const settled = async () => {
    for (const id of IDS) {
      const tx = lastTx(id);
      if (!tx || chargers.get(id)!.profiles().at(-1) !== tx) return false;
      const stored = (await api('GET', id)).body.charger_profile;
      // startSchedule is the plan's time to the second.
      if (stored?.status !== 'Accepted' || Math.floor(Date.parse(stored.planned_at) / 1000) * 1000 !== Date.parse(tx.csChargingProfiles.chargingSchedule.startSchedule)) return false;
    }
    return true;
  };

  it('two cars without a target: nothing sent while both fit at their maximum; on a load step both lowered fairly within the deadline; raised back when it falls', { timeout: 120_000 }, async () => {
    await until(() => ofSite().length >= 2, 'two polls of the site meter');
    const txOf = (id: string) => chargers.get(id)!.profiles().filter((p) => p.csChargingProfiles.chargingProfilePurpose === 'TxProfile');
    for (const id of FREE) {
      const c = chargers.get(id)!;
      c.transactionId = ((await c.client.call('StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: 0, timestamp: new Date(now()).toISOString() })) as { transactionId: number }).transactionId;
    }
    const status = async () => ((await (await fetch(`http://127.0.0.1:${httpPort}/status.json`)).json()) as any).fuse as any[];
    // Both under the controller, settled at their maximum (20 A beside ~4.3 A under 25 A): nothing sent, over several readings.
    await until(async () => (await status()).filter((f) => (FREE as readonly string[]).includes(f.charge_point_id) && f.health === 'settled').length === 2, 'both cars without a target under the fuse controller');
    const seen0 = ofSite().length;
    await until(() => ofSite().length >= seen0 + 3, 'three more readings', 60_000);
    for (const id of FREE) expect(chargers.get(id)!.profiles()).toEqual([]);

    // The load steps up: both are lowered to their fair share, within the deadline.
    const seen = ofSite().length;
    setLoadW(7000);
    await until(() => ofSite().slice(seen).some((s) => highestPhaseA(s) > 8), 'a reading that shows the new load');
    const high = ofSite().slice(seen).find((s) => highestPhaseA(s) > 8)!;
    const highAtMs = Date.now();
    await until(() => FREE.every((id) => txOf(id).length >= 1), 'both cars without a target lowered', 30_000);
    const lowered = FREE.map((id) => maxLimit(txOf(id).at(-1)!));
    const sentAtMs = Math.max(...FREE.map((id) => chargers.get(id)!.received.find((r) => r.action === 'SetChargingProfile')!.atMs));
    expect(sentAtMs - highAtMs).toBeLessThan(30_000); // site.lower_deadline_s (default 30)
    const highA = highestPhaseA(high);
    // Fair: equal shares (the same rule as planned connectors), and together within the limit.
    expect(Math.abs(lowered[0]! - lowered[1]!)).toBeLessThanOrEqual(0.2);
    for (const l of lowered) expect(l).toBeLessThan(FREE_MAX_A);
    expect(highA + lowered[0]! + lowered[1]!).toBeLessThanOrEqual(LIMIT_A + 0.5);
    // Each a TxProfile for its own transaction.
    for (const id of FREE) expect(txOf(id).at(-1)!.csChargingProfiles.transactionId).toBe(chargers.get(id)!.transactionId);
    await until(async () => (await status()).filter((f) => (FREE as readonly string[]).includes(f.charge_point_id) && f.health === 'settled' && f.in_force_a !== null && f.in_force_a < FREE_MAX_A).length === 2, 'both lowerings confirmed');

    // The load falls well below where it was: both raised back to their maximum (not before the raise
    // interval), once their shares less half the hysteresis (the margin every raise keeps) reach it.
    setLoadW(1000);
    await until(() => FREE.every((id) => maxLimit(txOf(id).at(-1)!) >= FREE_MAX_A), 'both raised back to their maximum', 60_000);
    const raisedAtMs = Math.min(...FREE.map((id) => chargers.get(id)!.received.filter((r) => r.action === 'SetChargingProfile').at(-1)!.atMs));
    expect(raisedAtMs - sentAtMs).toBeGreaterThanOrEqual(RAISE_INTERVAL_S * 1000);
    // Done: the cars leave, so the planned chargers below share the site alone.
    for (const id of FREE) {
      const c = chargers.get(id)!;
      await c.client.call('StopTransaction', { transactionId: c.transactionId, meterStop: 1000, timestamp: new Date(now()).toISOString(), reason: 'Local' });
    }
    await until(async () => (await status()).every((f) => !(FREE as readonly string[]).includes(f.charge_point_id)), 'the cars without a target no longer controlled');
    const seenEnd = ofSite().length;
    setLoadW(3000);
    await until(() => ofSite().slice(seenEnd).some((s) => highestPhaseA(s) > 3.5), 'a reading at the planned chargers\' load');
  });

  it('two chargers share the headroom equally and never exceed the limit together', { timeout: 120_000 }, async () => {
    await until(() => ofSite().length >= 2, 'two polls of the site meter');
    for (const id of IDS) expect((await api('PUT', id, { departure_time: DEPARTURE[id], energy_wh: 60_000 })).status).toBe(201);
    for (const id of IDS) {
      const c = chargers.get(id)!;
      const start = (await c.client.call('StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: 0, timestamp: new Date(now()).toISOString() })) as { transactionId: number };
      c.transactionId = start.transactionId;
    }
    // The second start halves the first one's share: the site follower lowers it on a reading.
    await until(async () => {
      if (!(await settled())) return false;
      const plans = await Promise.all(IDS.map(async (id) => (await api('GET', id)).body));
      return plans.every((p, i) => p.site_share?.connectors === 2 && maxLimit(lastTx(IDS[i])!) <= p.site_share.share_a + 0.05);
    }, 'both chargers on their half of the headroom', 60_000);
    const plans = await Promise.all(IDS.map(async (id) => (await api('GET', id)).body));
    const other = plans[0].site_meter.other_load_a;
    expect(plans[0].site_meter).toMatchObject({ state: 'measured', per_phase: 'currents' });
    expect(other).toBeGreaterThan(3);
    expect(other).toBeLessThan(6);
    for (const p of plans) expect(p.site_share.headroom_a).toBeCloseTo(LIMIT_A - p.site_meter.other_load_a, 1);
    const limits = IDS.map((id) => maxLimit(lastTx(id)!));
    // Equal halves within the limit: each TxProfile holds its share (rounded down to 0.1 A), one the
    // site follower sent half the hysteresis under it, and the load wobbles a little between the two plans.
    expect(Math.abs(limits[0]! - limits[1]!)).toBeLessThanOrEqual(HYSTERESIS_A / 2 + 0.5);
    expect(Math.min(...limits)).toBeGreaterThan((LIMIT_A - other) / 2 - HYSTERESIS_A);
    expect(other + limits[0]! + limits[1]!).toBeLessThanOrEqual(LIMIT_A + 0.5);
  });

  it('the load rises: both are lowered on the first or second reading that shows it, and then left alone', { timeout: 120_000 }, async () => {
    const before = siteUpdates.length;
    const seenBefore = ofSite().length;
    setLoadW(7000);
    await until(() => siteUpdates.length >= before + 2, 'both connectors lowered', 60_000);
    const lowered = siteUpdates.slice(before, before + 2);
    expect(new Set(lowered.map((u) => u.e.chargePointId))).toEqual(new Set(IDS));
    // The readings taken since the load was set, up to each lowering, that showed the new load.
    const firstHigh = ofSite().findIndex((s, i) => i >= seenBefore && highestPhaseA(s) > 8);
    expect(firstHigh).toBeGreaterThanOrEqual(seenBefore);
    for (const u of lowered) expect(u.samplesSeen - firstHigh).toBeLessThanOrEqual(2);
    await until(settled, 'both lowered TxProfiles accepted and stored', 60_000);
    const highA = highestPhaseA(ofSite()[firstHigh]!);
    const limits = IDS.map((id) => maxLimit(lastTx(id)!));
    for (const l of limits) expect(l).toBeLessThanOrEqual((LIMIT_A - highA) / 2 + 0.05);
    expect(highA + limits[0]! + limits[1]!).toBeLessThanOrEqual(LIMIT_A);
    // The plan says what it was made under.
    const got = (await api('GET', 'CP-EARLY')).body;
    expect(got.site_share.connectors).toBe(2);
    expect(got.site_meter.other_load_a).toBeGreaterThan(8);
    // The load stays high (wobbling as a real meter's does): no more profiles for ten readings.
    const sent = IDS.map((id) => chargers.get(id)!.profiles().length);
    const seen = ofSite().length;
    await until(() => ofSite().length >= seen + 10, 'ten more readings', 60_000);
    expect(siteUpdates.length).toBe(before + 2);
    expect(IDS.map((id) => chargers.get(id)!.profiles().length)).toEqual(sent);
  });

  it('the load falls: raised again once, not before site.raise_interval_s', { timeout: 120_000 }, async () => {
    const before = siteUpdates.length;
    const loweredAtMs = Math.max(...siteUpdates.slice(0, before).map((u) => u.atMs));
    const limitsLow = IDS.map((id) => maxLimit(lastTx(id)!));
    setLoadW(3000);
    await until(() => siteUpdates.length >= before + 2, 'both connectors raised', 60_000);
    const raised = siteUpdates.slice(before);
    expect(new Set(raised.map((u) => u.e.chargePointId))).toEqual(new Set(IDS));
    for (const u of raised) expect(u.atMs - loweredAtMs).toBeGreaterThanOrEqual(RAISE_INTERVAL_S * 1000);
    await until(settled, 'both raised TxProfiles accepted and stored', 60_000);
    const limits = IDS.map((id) => maxLimit(lastTx(id)!));
    limits.forEach((l, i) => expect(l).toBeGreaterThanOrEqual(limitsLow[i]! + HYSTERESIS_A));
    const other = (await api('GET', 'CP-EARLY')).body.site_meter.other_load_a;
    expect(other + limits[0]! + limits[1]!).toBeLessThanOrEqual(LIMIT_A);
    // Raised once: ten more readings at the same load send nothing.
    const seen = ofSite().length;
    await until(() => ofSite().length >= seen + 10, 'ten more readings', 60_000);
    expect(siteUpdates.length).toBe(before + 2);
  });

  it('the meter falls silent: after site.max_reading_age_s the earlier departure charges at the minimum, the other waits', { timeout: 120_000 }, async () => {
    const before = siteUpdates.length;
    await sim.kill();
    await until(() => siteUpdates.length >= before + 2, 'both connectors lowered on the stale meter', 90_000);
    const lastMs = Math.max(...ofSite().map((s) => s.sampledAtMs));
    for (const u of siteUpdates.slice(before)) expect(u.atMs - lastMs).toBeGreaterThan(MAX_AGE_S * 1000);
    await until(settled, 'both fallback TxProfiles accepted and stored', 60_000);
    expect(maxLimit(lastTx('CP-EARLY')!)).toBe(6);
    expect(maxLimit(lastTx('CP-LATE')!)).toBe(0);
    const late = (await api('GET', 'CP-LATE')).body;
    expect(late.site_meter).toMatchObject({ state: 'stale', assumed: true });
    expect(late.site_share).toMatchObject({ connectors: 2, headroom_a: 6, share_a: 0 });
    expect(late.shortfall_reason).toBe('no-current-available');
  });
});
