// Chargers that say no (docs/chargers.md "Chargers that say no"): a running gateway on REAL
// NL prices of 2025-11-12/13 and strict ocpp-rpc chargers that each refuse profiles the way
// chargers in the field do (test/helpers/ocpp-charger.ts ChargerRefusal). After its
// BootNotification the gateway reads what each declares; each still follows its plan by
// what it accepts, the plan's GET says which strategy is in force and why, and a car is
// never held at 0 with a kind of profile its charger refused. The gateway's clock is the
// test's: period boundaries are reached by moving it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { limitAt, startPlanGateway, type ChargerRefusal, type PlanGateway, type SentProfile, type SimulatedCharger } from '../helpers/ocpp-charger.js';
import { hasSharedData, SKIP_REASON } from '../helpers/shared-data.js';
import { until } from '../helpers/wait.js';

const at = (iso: string) => Date.parse(iso);
const TARGET = { departure_time: '2025-11-13T07:00:00Z', energy_wh: 20_000 };
const planPath = (id: string) => `/api/v1/chargers/${id}/connectors/1/plan`;
const CHARGERS: Record<string, ChargerRefusal> = {
  'CP-REJECTS-TX': 'rejects-tx-profile',
  'CP-TX-DEFAULT': 'only-tx-default',
  'CP-ONE-PERIOD': 'max-one-period',
  'CP-ONLY-W': 'only-w',
  'CP-NO-SC': 'no-smart-charging',
  'CP-NOT-IMPL': 'not-implemented',
  'CP-MAX-ONLY': 'only-charge-point-max',
};
interface PeriodView {
  start: string;
  end: string;
  current_a: number;
}

describe.skipIf(!hasSharedData)(`chargers that say no follow their plan by what they accept${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let gw: PlanGateway;
  const cp: Record<string, SimulatedCharger> = {};
  const tx: Record<string, number> = {};

  beforeAll(async () => {
    gw = await startPlanGateway({
      startMs: at('2025-11-12T12:00:00Z'),
      pricesFromMs: at('2025-11-12T00:00:00Z'),
      pricesToMs: at('2025-11-14T00:00:00Z'),
      // One connector each: a charger-wide profile or a remote stop concerns that connector alone.
      chargers: Object.keys(CHARGERS).map((id) => ({ id, connectors: [{ connector_id: 1 }] })),
    });
    for (const [id, refusal] of Object.entries(CHARGERS)) {
      cp[id] = await gw.connect(id, { refusal });
      await cp[id]!.client.call('BootNotification', { chargePointVendor: 'Vendor', chargePointModel: refusal.slice(0, 20) });
    }
    const stored = (id: string) => gw.daemon.ctx.db.prepare("SELECT COUNT(*) AS n FROM ocpp_charger_configuration WHERE charge_point_id = ? AND key = 'ChargingScheduleMaxPeriods'").get(id) as { n: number };
    await until(() => Object.keys(CHARGERS).every((id) => stored(id).n === 1), 'every charger configuration read', 30_000);
  }, 90_000);

  afterAll(async () => {
    await gw?.close();
  });

  const plan = async (id: string) => (await gw.api('GET', planPath(id))).body;
  const strategyOf = async (id: string) => (await plan(id)).charging_strategy?.strategy;
  const startTransaction = async (id: string, idTag = 'TAG-1') => {
    const r = (await cp[id]!.client.call('StartTransaction', { connectorId: 1, idTag, meterStart: 0, timestamp: new Date(gw.nowMs).toISOString() })) as { transactionId: number };
    tx[id] = r.transactionId;
    return r.transactionId;
  };

  it('asks each charger what it supports after its BootNotification and keeps its answers', async () => {
    expect(cp['CP-ONE-PERIOD']!.configurationRequests[0]).toEqual({ key: ['SupportedFeatureProfiles', 'ChargeProfileMaxStackLevel', 'ChargingScheduleAllowedChargingRateUnit', 'ChargingScheduleMaxPeriods'] });
    const rows = gw.daemon.ctx.db.prepare("SELECT key, value FROM ocpp_charger_configuration WHERE charge_point_id = 'CP-ONE-PERIOD' ORDER BY key").all();
    expect(rows).toEqual([
      { key: 'ChargeProfileMaxStackLevel', value: '1' },
      { key: 'ChargingScheduleAllowedChargingRateUnit', value: 'Current' },
      { key: 'ChargingScheduleMaxPeriods', value: '1' },
      { key: 'SupportedFeatureProfiles', value: 'Core,SmartCharging' },
    ]);
  });

  it('before a transaction: a TxDefaultProfile to who takes it, one period to the one that takes one, W to the one that takes W, nothing to the ones with no smart charging', async () => {
    for (const id of Object.keys(CHARGERS)) expect((await gw.api('PUT', planPath(id), TARGET)).status).toBe(201);
    await until(async () => {
      for (const id of Object.keys(CHARGERS)) if ((await strategyOf(id)) === undefined) return false;
      return true;
    }, 'a strategy for every charger', 30_000);
    for (const id of ['CP-REJECTS-TX', 'CP-TX-DEFAULT', 'CP-ONLY-W']) {
      await until(() => cp[id]!.profiles.length === 1, `${id}'s profile`, 20_000);
      expect(cp[id]!.profiles[0]!.csChargingProfiles.chargingProfilePurpose).toBe('TxDefaultProfile');
      expect(await strategyOf(id)).toBe('tx-default-profile');
    }
    expect(cp['CP-ONLY-W']!.profiles[0]!.csChargingProfiles.chargingSchedule.chargingRateUnit).toBe('W');
    // Max one period: never a longer schedule, not even once to find out.
    const onePeriod = await plan('CP-ONE-PERIOD');
    expect(onePeriod.charging_strategy).toMatchObject({ strategy: 'tx-default-profile-by-period', charger_refused: [] });
    expect(onePeriod.charging_strategy.reason).toContain('the charger takes 1 (ChargingScheduleMaxPeriods)');
    // The strategy is stored before its profile reaches the charger: the profile waited for.
    await until(() => cp['CP-ONE-PERIOD']!.profiles.length >= 1, 'CP-ONE-PERIOD\'s profile', 20_000);
    expect(cp['CP-ONE-PERIOD']!.profiles.map((p) => p.csChargingProfiles.chargingSchedule.chargingSchedulePeriod.length)).toEqual([1]);
    // No SmartCharging declared: no profile at all.
    expect(cp['CP-NO-SC']!.profiles).toEqual([]);
    const noSc = await plan('CP-NO-SC');
    expect(noSc.charging_strategy.strategy).toBe('remote-start-stop');
    expect(noSc.charging_strategy.reason).toContain('SupportedFeatureProfiles (Core,FirmwareManagement,RemoteTrigger) has no SmartCharging');
    // SetChargingProfile not implemented: one try, the CallError remembered, then remote stop/start.
    await until(async () => (await strategyOf('CP-NOT-IMPL')) === 'remote-start-stop', 'the NotImplemented charger on remote-start-stop', 20_000);
    const notImpl = await plan('CP-NOT-IMPL');
    expect(notImpl.charging_strategy.charger_refused).toEqual([{ strategy: 'all-profiles', answer: 'NotImplemented', at: '2025-11-12T12:00:00Z' }]);
    expect(notImpl.charger_profile).toMatchObject({ purpose: 'TxDefaultProfile', status: 'NotImplemented' });
    const metrics = await (await fetch(`http://127.0.0.1:${gw.httpPort}/metrics`)).text();
    expect(metrics).toContain('metergate_ocpp_charging_strategy{charge_point_id="CP-NOT-IMPL",connector_id="1",strategy="remote-start-stop"} 1');
    expect(metrics).toContain('metergate_ocpp_charging_strategy{charge_point_id="CP-ONE-PERIOD",connector_id="1",strategy="tx-default-profile-by-period"} 1');
  });

  it('a charger that takes only a ChargePointMaxProfile gets the plan as one on connector 0, after one try of each strategy above it; cleared with the target', async () => {
    const id = 'CP-MAX-ONLY';
    const charger = cp[id]!;
    // Before a transaction: TxDefaultProfile, by period, then ChargePointMaxProfile.
    await until(async () => (await plan(id)).charger_profile?.purpose === 'ChargePointMaxProfile', 'the ChargePointMaxProfile answer stored', 20_000);
    expect(charger.profiles.map((p) => p.csChargingProfiles.chargingProfilePurpose)).toEqual(['TxDefaultProfile', 'TxDefaultProfile', 'ChargePointMaxProfile']);
    const max = charger.profiles[2]!;
    expect(max.connectorId).toBe(0);
    expect(max.csChargingProfiles.chargingProfileId).toBe(13);
    expect(max.csChargingProfiles.transactionId).toBeUndefined();
    expect(max.csChargingProfiles.chargingSchedule).toEqual(charger.profiles[0]!.csChargingProfiles.chargingSchedule);
    expect(charger.profiles[1]!.csChargingProfiles.chargingSchedule.chargingSchedulePeriod).toHaveLength(1);
    const got = await plan(id);
    expect(got.charger_profile.status).toBe('Accepted');
    expect(got.charging_strategy.strategy).toBe('charge-point-max-profile');
    expect(got.charging_strategy.charger_refused.map((r: { strategy: string }) => r.strategy)).toEqual(['tx-default-profile', 'tx-default-profile-by-period']);
    // A transaction: one try of the TxProfile (never tried before), then the ChargePointMaxProfile again.
    await startTransaction(id);
    await until(() => charger.profiles.length === 6, 'the TxProfile tries and the ChargePointMaxProfile', 20_000);
    expect(charger.profiles.slice(3).map((p) => p.csChargingProfiles.chargingProfilePurpose)).toEqual(['TxProfile', 'TxProfile', 'ChargePointMaxProfile']);
    // The target deleted: its ChargePointMaxProfile is cleared too.
    expect((await gw.api('DELETE', planPath(id))).status).toBe(204);
    await until(() => charger.clears.length === 3, 'the clears', 20_000);
    expect(charger.clears.map((c) => c.id).sort()).toEqual([11, 12, 13]);
  });

  it('a charger that rejects the TxProfile gets the plan as a TxDefaultProfile at once, and never a TxProfile again', async () => {
    gw.nowMs = at('2025-11-12T12:05:00Z');
    const id = 'CP-REJECTS-TX';
    await startTransaction(id);
    await until(() => cp[id]!.profiles.length === 3, 'the TxProfile and the TxDefaultProfile after it', 20_000);
    const [, rejected, fallback] = cp[id]!.profiles as [SentProfile, SentProfile, SentProfile];
    expect(rejected.csChargingProfiles).toMatchObject({ chargingProfilePurpose: 'TxProfile', transactionId: tx[id] });
    expect(fallback.csChargingProfiles.chargingProfilePurpose).toBe('TxDefaultProfile');
    expect(fallback.csChargingProfiles.chargingSchedule).toEqual(rejected.csChargingProfiles.chargingSchedule);
    await until(async () => (await plan(id)).charger_profile?.purpose === 'TxDefaultProfile', 'the fallback answer stored', 20_000);
    const got = await plan(id);
    expect(got.charging_strategy).toMatchObject({ strategy: 'tx-default-profile', charger_refused: [{ strategy: 'tx-profile', answer: 'Rejected', at: '2025-11-12T12:05:00Z' }] });
    // A new plan (the target changed) goes straight to what the charger takes.
    expect((await gw.api('PUT', planPath(id), { ...TARGET, energy_wh: 15_000 })).status).toBe(200);
    await until(() => cp[id]!.profiles.length === 4, 'the new plan', 20_000);
    expect(cp[id]!.profiles[3]!.csChargingProfiles.chargingProfilePurpose).toBe('TxDefaultProfile');
    // Never again a TxProfile, a pause (a 0 A period) included.
    expect(cp[id]!.profiles.slice(2).map((p) => p.csChargingProfiles.chargingProfilePurpose)).toEqual(['TxDefaultProfile', 'TxDefaultProfile']);
    // A firmware update may bring what it refused: booted with another firmware, it is tried again (and refuses again here).
    const n = cp[id]!.profiles.length;
    await cp[id]!.client.call('BootNotification', { chargePointVendor: 'Vendor', chargePointModel: 'rejects-tx-profile', firmwareVersion: '2.0' });
    await until(() => cp[id]!.profiles.length === n + 2, 'the TxProfile tried again after the firmware changed, then the TxDefaultProfile', 20_000);
    expect(cp[id]!.profiles.slice(n).map((p) => p.csChargingProfiles.chargingProfilePurpose)).toEqual(['TxProfile', 'TxDefaultProfile']);
    await until(async () => (await plan(id)).charging_strategy.charger_refused.length === 1 && (await plan(id)).charger_profile?.purpose === 'TxDefaultProfile', 'the new refusal stored', 20_000);
    expect((await plan(id)).charging_strategy.charger_refused).toEqual([{ strategy: 'tx-profile', answer: 'Rejected', at: new Date(gw.nowMs).toISOString().replace('.000Z', 'Z') }]);
    const only = cp['CP-TX-DEFAULT']!;
    await startTransaction('CP-TX-DEFAULT');
    await until(() => only.profiles.length === 3, 'the TxDefault-only charger: TxProfile refused, TxDefaultProfile taken', 20_000);
    expect(only.profiles.map((p) => p.csChargingProfiles.chargingProfilePurpose)).toEqual(['TxDefaultProfile', 'TxProfile', 'TxDefaultProfile']);
  });

  it('a charger with no smart charging is paused by RemoteStopTransaction where the plan holds it at 0, and started again where it charges; the pause does not end its target', async () => {
    const ids = ['CP-NO-SC', 'CP-NOT-IMPL'];
    const firstStartMs = Date.parse(((await plan('CP-NO-SC')).planned.periods as PeriodView[])[0]!.start);
    const paused: Record<string, number> = {};
    for (const id of ids) {
      const charger = cp[id]!;
      expect(Date.parse(((await plan(id)).planned.periods as PeriodView[])[0]!.start)).toBe(firstStartMs);
      expect(firstStartMs).toBeGreaterThan(gw.nowMs);
      const txId = await startTransaction(id, `TAG-${id}`);
      paused[id] = txId;
      await until(() => charger.remote.length === 1, `${id} paused`, 20_000);
      expect(charger.remote[0]).toEqual({ method: 'RemoteStopTransaction', params: { transactionId: txId } });
      // The charger stops it, as asked.
      await charger.client.call('StopTransaction', { transactionId: txId, meterStop: 0, timestamp: new Date(gw.nowMs).toISOString(), reason: 'Remote' });
      await until(async () => (await plan(id)).charging_strategy?.paused_transaction_id === txId, 'the pause stored', 20_000);
      const got = await plan(id);
      expect(got.ended_at).toBeNull();
      expect(got.charger_profile_clears).toEqual([]);
    }
    // The plan's first charging period starts: each car is started again, with its own idTag.
    gw.nowMs = firstStartMs + 1000;
    for (const id of ids) {
      const charger = cp[id]!;
      await until(() => charger.remote.length === 2, `${id} resumed`, 20_000);
      expect(charger.remote[1]).toEqual({ method: 'RemoteStartTransaction', params: { connectorId: 1, idTag: `TAG-${id}` } });
      const resumedTx = await startTransaction(id, `TAG-${id}`);
      expect(resumedTx).not.toBe(paused[id]);
      await until(async () => (await plan(id)).charging_strategy?.paused_transaction_id === null, 'the resume stored', 20_000);
      // Charging now: not stopped again.
      expect(charger.remote).toHaveLength(2);
      expect(charger.profiles).toEqual([]);
    }
  });

  it('a charger that takes one period gets the plan one period at a time, again at each boundary', async () => {
    const id = 'CP-ONE-PERIOD';
    const charger = cp[id]!;
    // Before it, the TxDefaultProfile's period went again at each boundary the clock passed.
    expect(charger.profiles.length).toBeGreaterThanOrEqual(1);
    const n0 = charger.profiles.length;
    await startTransaction(id);
    // A boundary the clock passed before may still bring a TxDefaultProfile period: the transaction's is the TxProfile.
    const txProfileSince = (from: number) => charger.profiles.slice(from).find((p) => p.csChargingProfiles.chargingProfilePurpose === 'TxProfile');
    await until(() => txProfileSince(n0) !== undefined, 'the period in force for the transaction', 20_000);
    const forTx = txProfileSince(n0)!;
    const whole = (await plan(id)).planned.periods as PeriodView[];
    const firstCharging = whole[0]!;
    // The plan's own limit at an instant: its period's current (tenths), 0 between periods.
    const plannedA = (ms: number) => {
      const p = whole.find((q) => Date.parse(q.start) <= ms && ms < Date.parse(q.end));
      return p ? Math.floor(p.current_a * 10 + 1e-6) / 10 : 0;
    };
    expect(forTx.csChargingProfiles).toMatchObject({ chargingProfilePurpose: 'TxProfile', transactionId: tx[id] });
    expect(limitAt(forTx, 0)).toBe(plannedA(gw.nowMs));
    // Each boundary of the plan, reached: the next period, alone, with the plan's limit.
    const boundaries = [Date.parse(firstCharging.start), Date.parse(firstCharging.end)].filter((ms) => ms > gw.nowMs);
    expect(boundaries.length).toBeGreaterThan(0);
    for (const ms of boundaries) {
      const n = charger.profiles.length;
      gw.nowMs = ms + 1000;
      await until(() => charger.profiles.length === n + 1, `the profile at ${new Date(ms).toISOString()}`, 20_000);
      const sent = charger.profiles[n]!;
      expect(sent.csChargingProfiles.chargingSchedule.chargingSchedulePeriod).toHaveLength(1);
      expect(Date.parse(sent.csChargingProfiles.chargingSchedule.startSchedule)).toBe(ms + 1000);
      expect(limitAt(sent, 0)).toBe(plannedA(ms + 1000));
    }
    expect(plannedA(Date.parse(firstCharging.start) + 1000)).toBeGreaterThan(0);
    expect(charger.profiles.every((p) => p.csChargingProfiles.chargingSchedule.chargingSchedulePeriod.length === 1)).toBe(true);
    expect((await plan(id)).charging_strategy).toMatchObject({ strategy: 'tx-profile-by-period', charger_refused: [] });
  });

});

describe.skipIf(!hasSharedData)(`a one-off refusal demotes a charger for ocpp.refusal_retry_h only${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let gw: PlanGateway;
  let charger: SimulatedCharger;
  /** While true the charger rejects TxProfiles (a passing state of its own: a one-off refusal). */
  let rejecting = true;
  const id = 'CP-ONE-OFF';
  // Departs two and a half days later: the plan outlives the 24 h back-off.
  const LONG = { departure_time: '2025-11-15T00:00:00Z', energy_wh: 30_000 };

  beforeAll(async () => {
    gw = await startPlanGateway({
      startMs: at('2025-11-12T12:00:00Z'),
      pricesFromMs: at('2025-11-12T00:00:00Z'),
      pricesToMs: at('2025-11-15T00:00:00Z'),
      chargers: [{ id, connectors: [{ connector_id: 1 }] }],
    });
    charger = await gw.connect(id, { rateUnits: 'Current', answer: (p) => (rejecting && p.csChargingProfiles.chargingProfilePurpose === 'TxProfile' ? 'Rejected' : 'Accepted') });
    await charger.client.call('BootNotification', { chargePointVendor: 'Vendor', chargePointModel: 'one-off', firmwareVersion: '1.0' });
    await until(() => charger.configurationRequests.length === 1, 'its configuration read', 30_000);
  }, 90_000);

  afterAll(async () => {
    await gw?.close();
  });

  const plan = async () => (await gw.api('GET', planPath(id))).body;
  const purposes = (from: number) => charger.profiles.slice(from).map((p) => p.csChargingProfiles.chargingProfilePurpose);
  /** A changed target (a new plan at once) and the profiles it brings. */
  const replan = async (energyWh: number, count: number) => {
    const n = charger.profiles.length;
    expect((await gw.api('PUT', planPath(id), { ...LONG, energy_wh: energyWh })).status).toBe(200);
    await until(() => charger.profiles.length === n + count, `${count} profile(s) for the new plan`, 20_000);
    return purposes(n);
  };
  const settled = (strategy: string, purpose: string) =>
    until(async () => {
      const p = await plan();
      return p.charging_strategy?.strategy === strategy && p.charger_profile?.purpose === purpose && p.charger_profile?.status === 'Accepted';
    }, `${strategy} in force, its ${purpose} answer stored`, 20_000);

  it('tried again after 24 h (and after a boot); refused again, a new window starts; never a refused kind within one', async () => {
    expect((await gw.api('PUT', planPath(id), LONG)).status).toBe(201);
    await until(() => charger.profiles.length === 1, 'the TxDefaultProfile before the transaction', 20_000);
    gw.nowMs = at('2025-11-12T12:05:00Z');
    await charger.client.call('StartTransaction', { connectorId: 1, idTag: 'TAG-1', meterStart: 0, timestamp: new Date(gw.nowMs).toISOString() });
    await until(() => charger.profiles.length === 3, 'the TxProfile, rejected, and the TxDefaultProfile at once', 20_000);
    expect(purposes(1)).toEqual(['TxProfile', 'TxDefaultProfile']);
    await settled('tx-default-profile', 'TxDefaultProfile');
    expect((await plan()).charging_strategy.charger_refused).toEqual([{ strategy: 'tx-profile', answer: 'Rejected', at: '2025-11-12T12:05:00Z' }]);

    // Whatever made it refuse has passed; within the window the TxProfile is still not sent.
    rejecting = false;
    gw.nowMs = at('2025-11-13T12:04:59Z');
    expect(await replan(29_000, 1)).toEqual(['TxDefaultProfile']);
    // 24 h after the refusal: tried again, taken, and the charger is back on tx-profile.
    gw.nowMs = at('2025-11-13T12:05:00Z');
    expect(await replan(28_000, 1)).toEqual(['TxProfile']);
    await settled('tx-profile', 'TxProfile');
    expect((await plan()).charging_strategy.charger_refused).toEqual([]);

    // Refused again: the same plan goes as a TxDefaultProfile in the same exchange, and a new 24 h window starts.
    rejecting = true;
    gw.nowMs = at('2025-11-13T13:00:00Z');
    expect(await replan(27_000, 2)).toEqual(['TxProfile', 'TxDefaultProfile']);
    await settled('tx-default-profile', 'TxDefaultProfile');
    gw.nowMs = at('2025-11-14T12:59:59Z');
    expect(await replan(26_000, 1)).toEqual(['TxDefaultProfile']);

    // A boot (same firmware) ends the window too: its plan goes as a TxProfile first.
    rejecting = false;
    const n = charger.profiles.length;
    await charger.client.call('BootNotification', { chargePointVendor: 'Vendor', chargePointModel: 'one-off', firmwareVersion: '1.0' });
    await until(() => charger.profiles.length === n + 1, 'the plan after the boot', 20_000);
    expect(purposes(n)).toEqual(['TxProfile']);
    await settled('tx-profile', 'TxProfile');
  });
});

// A charger that refused profiles outright once (NotSupported) runs its car on
// remote-start-stop; the plan pauses it by RemoteStopTransaction. When the refusal's window
// (ocpp.refusal_retry_h) has ended the charger would take a TxDefaultProfile again, but no
// profile starts a stopped car: it stays on remote-start-stop until the car has been started
// again by RemoteStartTransaction, where its plan charges.
describe.skipIf(!hasSharedData)(`a car paused by remote stop is started again after the refusal window${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let gw: PlanGateway;
  let charger: SimulatedCharger;
  let refusing = true;
  const id = 'CP-PAUSED';
  // A few hours of charging within two and a half days: the plan charges in the cheapest periods only.
  const LONG = { departure_time: '2025-11-15T00:00:00Z', energy_wh: 8_000 };

  beforeAll(async () => {
    gw = await startPlanGateway({
      startMs: at('2025-11-12T12:00:00Z'),
      pricesFromMs: at('2025-11-12T00:00:00Z'),
      pricesToMs: at('2025-11-15T00:00:00Z'),
      chargers: [{ id, connectors: [{ connector_id: 1 }] }],
    });
    charger = await gw.connect(id, { rateUnits: 'Current', answer: () => (refusing ? 'NotSupported' : 'Accepted') });
    await charger.client.call('BootNotification', { chargePointVendor: 'Vendor', chargePointModel: 'paused', firmwareVersion: '1.0' });
    await until(() => charger.configurationRequests.length === 1, 'its configuration read', 30_000);
  }, 90_000);

  afterAll(async () => {
    await gw?.close();
  });

  const plan = async () => (await gw.api('GET', planPath(id))).body;

  it('stays on remote-start-stop while its car waits, and starts it where the plan charges', async () => {
    expect((await gw.api('PUT', planPath(id), LONG)).status).toBe(201);
    await until(async () => (await plan()).charging_strategy?.strategy === 'remote-start-stop', 'remote-start-stop after NotSupported', 20_000);
    const first = await plan();
    const chargingFromMs = Date.parse(first.planned.periods[0].start);
    // Plugged in now, outside its cheapest periods: paused at once.
    expect(chargingFromMs).toBeGreaterThan(at('2025-11-12T12:05:00Z'));
    gw.nowMs = at('2025-11-12T12:05:00Z');
    const txId = ((await charger.client.call('StartTransaction', { connectorId: 1, idTag: 'TAG-P', meterStart: 0, timestamp: new Date(gw.nowMs).toISOString() })) as { transactionId: number }).transactionId;
    await until(() => charger.remote.length === 1, 'the car paused', 20_000);
    expect(charger.remote[0]).toEqual({ method: 'RemoteStopTransaction', params: { transactionId: txId } });
    await charger.client.call('StopTransaction', { transactionId: txId, meterStop: 0, timestamp: new Date(gw.nowMs).toISOString(), reason: 'Remote' });
    await until(async () => (await plan()).charging_strategy?.paused_transaction_id === txId, 'the pause kept', 20_000);

    // A day and more later the refusal's window is over and the charger would take profiles again.
    refusing = false;
    const profilesBefore = charger.profiles.length;
    gw.nowMs = at('2025-11-13T12:10:00Z');
    expect((await gw.api('PUT', planPath(id), { ...LONG, energy_wh: 7_900 })).status).toBe(200);
    const later = await plan();
    const startMs = Date.parse(later.planned.periods[0].start);
    expect(startMs).toBeGreaterThan(gw.nowMs);
    // Where its plan charges, the car is started again (a new plan at that time: a PUT, as a client changing it).
    gw.nowMs = startMs;
    expect((await gw.api('PUT', planPath(id), { ...LONG, energy_wh: 7_800 })).status).toBe(200);
    await until(() => charger.remote.length === 2, 'the paused car started again', 20_000);
    expect(charger.remote[1]).toEqual({ method: 'RemoteStartTransaction', params: { connectorId: 1, idTag: 'TAG-P' } });
    const p = await plan();
    expect(p.charging_strategy.strategy).toBe('remote-start-stop');
    // No profile was sent while the car waited: none would have started it.
    expect(charger.profiles.slice(profilesBefore).map((s) => s.csChargingProfiles.chargingProfilePurpose)).toEqual([]);
  });
});
