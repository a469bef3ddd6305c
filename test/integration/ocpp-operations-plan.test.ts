// The operator operations that carry the plan (issue 22 item 1): RemoteStartTransaction with
// the connector's plan as its TxProfile, and GetCompositeSchedule shown next to the plan it
// should equal. A running gateway (Daemon with its real modules) on real NL prices, real
// HTTP with a cpo token (answers checked against openapi.json), and a strict ocpp-rpc
// charger that validates every call the gateway sends.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlanGateway, type PlanGateway, type SentProfile, type SimulatedCharger } from '../helpers/ocpp-charger.js';
import { hasSharedData, SKIP_REASON } from '../helpers/shared-data.js';
import { until } from '../helpers/wait.js';

const at = (iso: string) => Date.parse(iso);
type Json = Record<string, any>;

describe.skipIf(!hasSharedData)(`operations with the plan${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let gw: PlanGateway;
  let cp: SimulatedCharger;
  const remoteStarts: Json[] = [];
  /** How the charger's composite schedule differs from the last profile it took (none: it applies it as sent). */
  let compositeLimitOffset = 0;

  beforeAll(async () => {
    gw = await startPlanGateway({ startMs: at('2025-11-12T12:00:00Z'), pricesFromMs: 0, pricesToMs: at('2025-11-12T23:00:00Z'), chargers: [{ id: 'CP-OPS-PLAN' }, { id: 'CP-OPS-CORE' }, { id: 'CP-OPS-SHORT' }] });
    cp = await gw.connect('CP-OPS-PLAN');
    cp.client.handle('RemoteStartTransaction', async ({ params }: { params?: unknown }) => {
      remoteStarts.push(params as Json);
      return { status: 'Accepted' };
    });
    // A charger computes its composite schedule from the profiles it holds: here the last one it took.
    cp.client.handle('GetCompositeSchedule', async ({ params }: { params?: unknown }) => {
      const p = params as Json;
      const last = cp.profiles.at(-1);
      if (!last) return { status: 'Rejected' };
      const s = last.csChargingProfiles.chargingSchedule;
      const periods = s.chargingSchedulePeriod.map((x, i) => ({ ...x, limit: i === 1 ? x.limit + compositeLimitOffset : x.limit }));
      return { status: 'Accepted', connectorId: p.connectorId, scheduleStart: s.startSchedule, chargingSchedule: { duration: s.duration, startSchedule: s.startSchedule, chargingRateUnit: s.chargingRateUnit, chargingSchedulePeriod: periods } };
    });
    await cp.client.call('BootNotification', { chargePointVendor: 'Alfen', chargePointModel: 'Eve Single' });
  }, 120_000);

  afterAll(async () => {
    await gw?.close();
  });

  const op2 = (id: string, name: string, body: unknown) => gw.api('POST', `/api/v1/chargers/${id}/${name}`, body, `/api/v1/chargers/{charge_point_id}/${name}`);
  const op = (name: string, body: unknown) => gw.api('POST', `/api/v1/chargers/CP-OPS-PLAN/${name}`, body, `/api/v1/chargers/{charge_point_id}/${name}`);

  it('starts remotely with the connector\'s plan as the TxProfile, and refuses a connector without one', { timeout: 120_000 }, async () => {
    const noPlan = await op('remote-start', { id_tag: 'T1', connector_id: 2, charging_profile: 'plan' });
    expect(noPlan.status).toBe(409);
    expect(noPlan.body.detail).toContain('no charging target');
    expect(remoteStarts).toEqual([]);

    const put = await gw.api('PUT', '/api/v1/chargers/CP-OPS-PLAN/connectors/1/plan', { departure_time: '2025-11-13T06:00:00Z', energy_wh: 20_000 });
    expect(put.status).toBe(201);
    await until(async () => (await gw.api('GET', '/api/v1/chargers/CP-OPS-PLAN/connectors/1/plan')).body.charger_profile?.status === 'Accepted', 'the plan taken as TxDefaultProfile', 60_000);
    const sentDefault = cp.profiles.at(-1) as SentProfile;
    expect(sentDefault.csChargingProfiles.chargingProfilePurpose).toBe('TxDefaultProfile');

    const start = await op('remote-start', { id_tag: 'T1', connector_id: 1, charging_profile: 'plan' });
    expect(start.status).toBe(200);
    expect(start.body.answer).toEqual({ status: 'Accepted' });
    expect(remoteStarts).toHaveLength(1);
    const got = remoteStarts[0]!;
    expect(got).toMatchObject({ idTag: 'T1', connectorId: 1, chargingProfile: { chargingProfilePurpose: 'TxProfile', chargingProfileId: 12, chargingProfileKind: 'Absolute' } });
    expect(got.chargingProfile.transactionId).toBeUndefined();
    // The same plan, made at the same instant, as the default profile the charger holds.
    expect(got.chargingProfile.chargingSchedule).toEqual(sentDefault.csChargingProfiles.chargingSchedule);
    expect(start.body.request).toEqual(got);
  });

  it('does not start with the plan a charger that does not declare SmartCharging', { timeout: 120_000 }, async () => {
    const core = await gw.connect('CP-OPS-CORE');
    const starts: Json[] = [];
    core.client.handle('GetConfiguration', async () => ({ configurationKey: [{ key: 'SupportedFeatureProfiles', readonly: true, value: 'Core,RemoteTrigger' }] }));
    core.client.handle('RemoteStartTransaction', async ({ params }: { params?: unknown }) => {
      starts.push(params as Json);
      return { status: 'Accepted' };
    });
    await core.client.call('BootNotification', { chargePointVendor: 'Pulsar', chargePointModel: 'Plus' });
    expect((await gw.api('PUT', '/api/v1/chargers/CP-OPS-CORE/connectors/1/plan', { departure_time: '2025-11-13T06:00:00Z', energy_wh: 20_000 })).status).toBe(201);
    await until(async () => (await (await fetch(`http://127.0.0.1:${gw.httpPort}/metrics`)).text()).includes('metergate_ocpp_charger_supported_profile{charge_point_id="CP-OPS-CORE",profile="Core"} 1'), 'the feature profiles read', 60_000);
    const refused = await op2('CP-OPS-CORE', 'remote-start', { id_tag: 'T2', connector_id: 1, charging_profile: 'plan' });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain('does not declare SmartCharging');
    expect(starts).toEqual([]);
    // Without the profile it starts.
    expect((await op2('CP-OPS-CORE', 'remote-start', { id_tag: 'T2', connector_id: 1 })).body.answer).toEqual({ status: 'Accepted' });
    expect(starts).toEqual([{ idTag: 'T2', connectorId: 1 }]);
  });

  it('cuts the start\'s profile to the periods a charger takes (ChargingScheduleMaxPeriods)', { timeout: 120_000 }, async () => {
    const short = await gw.connect('CP-OPS-SHORT');
    const starts: Json[] = [];
    short.client.handle('GetConfiguration', async () => ({
      configurationKey: [
        { key: 'SupportedFeatureProfiles', readonly: true, value: 'Core,SmartCharging' },
        { key: 'ChargingScheduleMaxPeriods', readonly: true, value: '2' },
        { key: 'ChargeProfileMaxStackLevel', readonly: true, value: '1' },
      ],
    }));
    short.client.handle('RemoteStartTransaction', async ({ params }: { params?: unknown }) => {
      starts.push(params as Json);
      return { status: 'Accepted' };
    });
    await short.client.call('BootNotification', { chargePointVendor: 'Amperfied', chargePointModel: 'Wallbox' });
    expect((await gw.api('PUT', '/api/v1/chargers/CP-OPS-SHORT/connectors/1/plan', { departure_time: '2025-11-13T06:00:00Z', energy_wh: 20_000 })).status).toBe(201);
    await until(async () => (await (await fetch(`http://127.0.0.1:${gw.httpPort}/metrics`)).text()).includes('metergate_ocpp_charger_supported_profile{charge_point_id="CP-OPS-SHORT",profile="SmartCharging"} 1'), 'the configuration read', 60_000);
    const whole = (await op('remote-start', { id_tag: 'T3', connector_id: 1, charging_profile: 'plan' })).body.request.chargingProfile.chargingSchedule;
    // The same target on the unlimited charger: the plan has more periods than 2.
    expect(whole.chargingSchedulePeriod.length).toBeGreaterThan(2);
    const start = await op2('CP-OPS-SHORT', 'remote-start', { id_tag: 'T3', connector_id: 1, charging_profile: 'plan' });
    expect(start.status).toBe(200);
    expect(start.body.note).toContain('takes 2 (ChargingScheduleMaxPeriods)');
    const profile = starts[0]!.chargingProfile;
    expect(profile.chargingSchedule.chargingSchedulePeriod).toHaveLength(2);
    expect(profile).toMatchObject({ chargingProfilePurpose: 'TxProfile', stackLevel: 0 });
    expect(profile.transactionId).toBeUndefined();
    expect(profile.chargingSchedule.chargingSchedulePeriod[0].startPeriod).toBe(0);
    // The periods sent are the plan's from now, at the plan's instants.
    const offsetS = (Date.parse(profile.chargingSchedule.startSchedule) - Date.parse(whole.startSchedule)) / 1000;
    const fromNow = whole.chargingSchedulePeriod.filter((p: Json, i: number, all: Json[]) => (all[i + 1]?.startPeriod ?? Infinity) > offsetS).slice(0, 2);
    expect(profile.chargingSchedule.chargingSchedulePeriod.map((p: Json) => p.limit)).toEqual(fromNow.map((p: Json) => p.limit));
  });

  it('returns the composite schedule next to the plan it should equal, and says where it does not', { timeout: 120_000 }, async () => {
    const same = await op('get-composite-schedule', { connector_id: 1, duration_s: 18 * 3600 });
    expect(same.status).toBe(200);
    expect(same.body.plan).toMatchObject({ purpose: 'TxDefaultProfile', status: 'Accepted' });
    expect(same.body.plan.charging_schedule).toEqual(cp.profiles.at(-1)!.csChargingProfiles.chargingSchedule);
    expect(same.body.comparison).toMatchObject({ comparable: true, equal: true, differences: [] });

    compositeLimitOffset = 1;
    const off = await op('get-composite-schedule', { connector_id: 1, duration_s: 18 * 3600 });
    const periods = cp.profiles.at(-1)!.csChargingProfiles.chargingSchedule.chargingSchedulePeriod;
    const startMs = Date.parse(cp.profiles.at(-1)!.csChargingProfiles.chargingSchedule.startSchedule);
    expect(off.body.comparison.equal).toBe(false);
    expect(off.body.comparison.differences).toEqual([
      { at: new Date(startMs + periods[1]!.startPeriod * 1000).toISOString().replace('.000Z', 'Z'), composite_limit: periods[1]!.limit + 1, planned_limit: periods[1]!.limit },
    ]);
  });
});
