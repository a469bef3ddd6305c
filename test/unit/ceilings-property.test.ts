// Configured limits are ceilings (docs/chargers.md "Ceilings"), checked as a property: fast-check
// draws a site (site.limit_a or none, a site meter measuring the rest of the site or the
// chargers too, or none), configured chargers and connectors (current, minimum, phases,
// voltage, some with a default target), hourly prices, and a run of what happens on a site:
// clients setting targets with any limits (far above the configured ones, as a request or a
// row stored before the config was lowered would be; also for charge points and connectors
// that are not configured), transactions starting and stopping, cars drawing what they
// draw, the site meter's readings, outages, new prices, time passing. The real planner
// (planning/target-plan.ts on a real SQLite file) and the real followers
// (ocpp/plan-follower.ts, ocpp/fuse-controller.ts, wired on the event bus as daemon.ts wires
// them) plan; every plan told on the bus, and every plan the central system makes on a
// transaction start, is built into a SetChargingProfile by ocpp/charging-profile.ts (in A or
// in W, as the charger declared) and stored as accepted, as the central system does. Every
// profile ever built is checked against the configured ceilings at the moment it was built:
// per phase never more than the connector's max_current_a, never on more phases than it has,
// never more than site.limit_a, and with a fresh site meter reading never more than the
// headroom it measured; none at all for a connector that is not configured. After every
// event the TxProfiles in force on the charging connectors add up to at most site.limit_a.
import { Registry } from 'prom-client';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/types.js';
import type { AppContext } from '../../src/context.js';
import type { MeterSample } from '../../src/domain.js';
import { EventBus, type Events } from '../../src/events.js';
import { createLogger } from '../../src/log.js';
import { chargingProfileRequest, type SetChargingProfileRequest } from '../../src/ocpp/charging-profile.js';
import { ChargerSessions } from '../../src/ocpp/charger-sessions.js';
import { PlanFollower } from '../../src/ocpp/plan-follower.js';
import { FuseController } from '../../src/ocpp/fuse-controller.js';
import type { Plan } from '../../src/planning/plan.js';
import { buildChargingServices } from '../../src/planning/charging-services.js';
import { Replanner } from '../../src/planning/replan.js';
import type { SiteMeterReading } from '../../src/planning/site-load.js';
import { ConnectorNotConfigured } from '../../src/planning/target-plan.js';
import type { ChargingTarget } from '../../src/store/charging-targets.js';
import { openDaemonDatabase, databasePath } from '../../src/store/db.js';
import { PriceStore } from '../../src/store/prices.js';
import { storePrices } from '../../src/prices/price-merge.js';

const T0 = Date.parse('2025-05-11T00:00:00Z');
const HOUR = 3_600_000;
const SITE_METER = 'site-grid';
const PASSWORD = 'charger-secret-0123456789';
const CHARGE_POINTS = ['CP-A', 'CP-B', 'CP-C'] as const;
/** Index 3: a charge point that is not configured. */
const GHOST = 'CP-GHOST';

interface ConnectorSpec {
  readonly connector_id: number;
  readonly max_current_a: number;
  readonly min_current_a: number;
  readonly phases: 1 | 3;
  readonly voltage_v: number;
  readonly default_target?: { readonly departure_local_time: string; readonly energy_wh: number };
}

interface Scenario {
  readonly siteLimitA: number | null;
  readonly meter: 'none' | 'rest-of-site' | 'includes-chargers';
  readonly chargers: ReadonlyArray<{ readonly connectors: readonly ConnectorSpec[]; readonly rateUnit: 'A' | 'W' }>;
  readonly hourlyPrices: readonly number[];
  readonly actions: readonly Action[];
}

type Action =
  | {
      readonly kind: 'target';
      readonly cp: number;
      readonly connectorId: number;
      readonly departureH: number;
      readonly energyWh: number;
      readonly maxCurrentA: number;
      readonly minCurrentA: number;
      readonly phases: 1 | 3;
      readonly voltageV: number;
      readonly siteLimitA: number | null;
      readonly siteOtherLoadA: number | null;
    }
  | { readonly kind: 'start'; readonly cp: number; readonly connectorId: number }
  | { readonly kind: 'draw'; readonly cp: number; readonly connectorId: number; readonly currentsA: readonly [number, number, number]; readonly minutes: number }
  | { readonly kind: 'site'; readonly currentsA: readonly [number, number, number]; readonly ageS: number }
  | { readonly kind: 'time'; readonly minutes: number }
  | { readonly kind: 'prices' }
  | { readonly kind: 'stop'; readonly cp: number; readonly connectorId: number }
  | { readonly kind: 'outage'; readonly cp: number; readonly connectorId: number };

const current = fc.double({ min: 0, max: 80, noNaN: true });
const connectorSpec = (connectorId: number): fc.Arbitrary<ConnectorSpec> =>
  fc
    .record({
      max: fc.integer({ min: 6, max: 40 }),
      min: fc.constantFrom(0, 6, 8),
      phases: fc.constantFrom<1 | 3>(1, 3),
      voltage: fc.constantFrom(220, 230, 240),
      withDefault: fc.boolean(),
      defaultWh: fc.integer({ min: 1_000, max: 60_000 }),
    })
    .map((c) => ({
      connector_id: connectorId,
      max_current_a: c.max,
      min_current_a: Math.min(c.min, c.max),
      phases: c.phases,
      voltage_v: c.voltage,
      ...(c.withDefault ? { default_target: { departure_local_time: '07:00', energy_wh: c.defaultWh } } : {}),
    }));

const cpIndex = fc.integer({ min: 0, max: 3 });
const connectorId = fc.integer({ min: 1, max: 3 });
const target = fc.record({
  kind: fc.constant('target' as const),
  cp: cpIndex,
  connectorId,
  departureH: fc.integer({ min: 1, max: 30 }),
  energyWh: fc.integer({ min: 500, max: 120_000 }),
  maxCurrentA: fc.oneof(fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 1, max: 40 })),
  minCurrentA: fc.integer({ min: 0, max: 20 }),
  phases: fc.constantFrom<1 | 3>(1, 3),
  voltageV: fc.integer({ min: 100, max: 500 }),
  siteLimitA: fc.option(fc.integer({ min: 1, max: 10_000 }), { nil: null }),
  siteOtherLoadA: fc.option(fc.integer({ min: 0, max: 60 }), { nil: null }),
});
const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 4, arbitrary: target },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('start' as const), cp: cpIndex, connectorId }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('draw' as const), cp: cpIndex, connectorId, currentsA: fc.tuple(current, current, current), minutes: fc.integer({ min: 1, max: 20 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('site' as const), currentsA: fc.tuple(current, current, current), ageS: fc.constantFrom(0, 0, 0, 5, 600) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('time' as const), minutes: fc.integer({ min: 1, max: 120 }) }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'prices' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('stop' as const), cp: cpIndex, connectorId }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('outage' as const), cp: cpIndex, connectorId }) },
);

const scenario: fc.Arbitrary<Scenario> = fc.record({
  siteLimitA: fc.option(fc.integer({ min: 6, max: 63 }), { nil: null }),
  meter: fc.constantFrom<Scenario['meter']>('none', 'rest-of-site', 'includes-chargers'),
  chargers: fc.array(
    fc.record({
      // Connectors 1 and 2 at most: connector 3 is never configured.
      connectors: fc.oneof({ weight: 5, arbitrary: fc.constant([1, 2]) }, { weight: 2, arbitrary: fc.subarray([1, 2]) }).chain((ids) => fc.tuple(...ids.map(connectorSpec))),
      rateUnit: fc.constantFrom<'A' | 'W'>('A', 'W'),
    }),
    { minLength: 1, maxLength: 3 },
  ),
  hourlyPrices: fc.array(fc.integer({ min: -400, max: 400 }), { minLength: 48, maxLength: 48 }),
  actions: fc.array(action, { minLength: 1, maxLength: 40, size: 'medium' }),
});

interface Violation {
  readonly what: string;
  readonly chargePointId: string;
  readonly connectorId: number;
  readonly detail: Record<string, unknown>;
}

/** Runs one scenario through the real planner and followers; returns every ceiling a built profile broke. */
function run(sc: Scenario): { violations: Violation[]; profilesBuilt: number } {
  const dir = mkdtempSync(join(tmpdir(), 'mg-ceilings-'));
  let nowMs = T0 + 6 * HOUR;
  let reading: SiteMeterReading | null = null;
  const violations: Violation[] = [];
  let profilesBuilt = 0;
  const config: Config = validateConfig(
    {
      organization_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
      data_dir: dir,
      log_level: 'fatal',
      prices: { regions: ['NL'], source: 'none' },
      forecast: { enabled: false },
      site: {
        ...(sc.siteLimitA === null ? {} : { limit_a: sc.siteLimitA }),
        max_reading_age_s: 60,
        meter_includes_chargers: sc.meter === 'includes-chargers',
        // Chargers without connectors are part of what this property covers (never planned).
        uncounted_chargers: 'allow',
      },
      chargers: sc.chargers.map((c, i) => ({ id: CHARGE_POINTS[i], password: PASSWORD, auth: 'accept_all', connectors: c.connectors })),
    },
    'test',
    {},
  );
  // The site meter as the planner reads it (site/site-meter.ts keeps the latest reading); set without a meters entry, as only its reading matters here.
  const withMeter: Config = sc.meter === 'none' ? config : { ...config, site: { ...config.site, meter: SITE_METER } };
  const db = openDaemonDatabase(databasePath(dir));
  const logger = createLogger('silent');
  const events = new EventBus(logger);
  const ctx = { config: withMeter, logger, db, clock: { now: () => nowMs }, events, probes: { siteMeter: () => reading }, metrics: new Registry() } as unknown as AppContext;
  const sessions = new ChargerSessions(db, { marketArea: 'NL' });
  const ocpp = sessions.store;
  // One planner and one set of stores for all, as daemon.ts builds them.
  const charging = buildChargingServices(ctx);
  const { targets, profiles } = charging.stores;
  const planner = charging.planner;
  const planFollower = new PlanFollower(ctx, charging);
  // The escalation means are the dispatcher's: this harness's chargers take every profile, so none is ever needed.
  const siteFollower = new FuseController(ctx, charging, { sendPlan: async () => undefined, sendLimit: async () => undefined, clearEscalationProfile: async () => undefined }, () => true, new Registry());
  const replanner = new Replanner(ctx, charging);
  const registers = new Map<string, number>();
  /** The chargers' latest Current.Import per connector (what a meter that measures the chargers sees of them). */
  const draws = new Map<string, { atMs: number; currentsA: readonly [number, number, number] }>();
  const key = (cp: string, connectorId: number) => `${cp}/${connectorId}`;
  // 3 is the charge point that is not configured; 0..2 one of the configured ones.
  const cpOf = (i: number) => (i === 3 ? GHOST : CHARGE_POINTS[i % sc.chargers.length]!);
  const ceilingOf = (cp: string, connectorId: number) => {
    const i = CHARGE_POINTS.indexOf(cp as (typeof CHARGE_POINTS)[number]);
    return i < 0 || i >= sc.chargers.length ? undefined : sc.chargers[i]!.connectors.find((c) => c.connector_id === connectorId);
  };

  /** The headroom per phase a fresh site meter reading leaves (a bound: every charger's draw taken off, when it measures them). */
  const measuredHeadroomA = (): number | null => {
    if (sc.meter === 'none' || sc.siteLimitA === null || !reading || Math.abs(nowMs - reading.sampledAtMs) > 60_000) return null;
    const phases = [0, 1, 2].map((p) => {
      let a = Math.max(0, reading!.currentsA![p]!);
      if (sc.meter === 'includes-chargers') for (const d of draws.values()) if (Math.abs(nowMs - d.atMs) <= 60_000) a -= Math.max(0, d.currentsA[p]!);
      return a;
    });
    return Math.max(0, sc.siteLimitA - Math.max(0, ...phases));
  };

  /** The SetChargingProfile the central system sends for a plan (central-system.ts sendProfile), checked and stored as accepted. */
  const send = (chargePointId: string, connectorId: number, plan: Plan, plannedAtMs: number, target: ChargingTarget) => {
    const open = ocpp.chargePointView(chargePointId).openTransactions.filter((t) => t.connectorId === connectorId);
    const transactionId = open.length > 0 ? open[open.length - 1]!.transactionId : null;
    const i = CHARGE_POINTS.indexOf(chargePointId as (typeof CHARGE_POINTS)[number]);
    const rateUnit = i >= 0 && i < sc.chargers.length ? sc.chargers[i]!.rateUnit : 'A';
    const request = chargingProfileRequest(plan, { connectorId, transactionId, plannedAtMs, departureMs: target.departureMs, rateUnit });
    profilesBuilt++;
    check(chargePointId, connectorId, request);
    const profile = request.csChargingProfiles;
    profiles.put({ chargePointId, connectorId, purpose: profile.chargingProfilePurpose, transactionId, chargingProfileId: profile.chargingProfileId, plannedAtMs, sentAtMs: nowMs, status: 'Accepted', error: null, periods: profile.chargingSchedule.chargingSchedulePeriod.length, requestJson: JSON.stringify(request) });
    // What the dispatcher tells the fuse controller of each call and its answer.
    siteFollower.limitSent({ chargePointId, connectorId, means: 'profile', request, transactionId, atMs: nowMs });
    siteFollower.limitAnswered({ chargePointId, connectorId, sentAtMs: nowMs, outcome: 'accepted', answer: 'Accepted', binds: transactionId !== null || profile.chargingProfilePurpose !== 'TxProfile', atMs: nowMs });
  };

  const check = (chargePointId: string, connectorId: number, request: SetChargingProfileRequest) => {
    const ceiling = ceilingOf(chargePointId, connectorId);
    if (!ceiling) {
      violations.push({ what: 'profile for a connector that is not configured', chargePointId, connectorId, detail: {} });
      return;
    }
    const schedule = request.csChargingProfiles.chargingSchedule;
    const headroomA = measuredHeadroomA();
    for (const p of schedule.chargingSchedulePeriod) {
      const phases = p.numberPhases ?? 3;
      // What flows on one phase: a limit in W at the phases the charger may use and has, at its real (configured) voltage.
      const perPhaseA = schedule.chargingRateUnit === 'A' ? p.limit : p.limit / (Math.min(phases, ceiling.phases) * ceiling.voltage_v);
      const detail = { limit: p.limit, unit: schedule.chargingRateUnit, numberPhases: p.numberPhases, perPhaseA, ceiling, siteLimitA: sc.siteLimitA, headroomA, atMs: nowMs };
      if (perPhaseA > ceiling.max_current_a + 1e-9) violations.push({ what: 'above the connector max_current_a', chargePointId, connectorId, detail });
      if (sc.siteLimitA !== null && perPhaseA > sc.siteLimitA + 1e-9) violations.push({ what: 'above site.limit_a', chargePointId, connectorId, detail });
      if (headroomA !== null && perPhaseA > headroomA + FLOAT_NOISE_A) violations.push({ what: 'above the headroom the site meter measured', chargePointId, connectorId, detail });
      if (p.limit > 0 && phases > ceiling.phases) violations.push({ what: 'on more phases than the connector has', chargePointId, connectorId, detail });
    }
  };

  // Wired as daemon.ts wires them; the bus only logs a listener that throws, so the test keeps what it threw.
  const errors: unknown[] = [];
  const kept =
    <P>(listener: (p: P) => void) =>
    (p: P) => {
      try {
        listener(p);
      } catch (err) {
        errors.push(err);
      }
    };
  events.on(
    'plan.updated',
    kept((e: Events['plan.updated']) => {
      const target = targets.get(e.chargePointId, e.connectorId);
      if (target) send(e.chargePointId, e.connectorId, e.plan, e.plannedAtMs, target);
    }),
  );
  events.on('charger.energy-measured', kept((e) => planFollower.energyMeasured(e)));
  events.on('charger.connector-status', kept((e) => planFollower.connectorStatus(e)));
  events.on('charger.transaction-started', kept((e) => planFollower.transactionStarted(e)));
  events.on('charger.transaction-stopped', kept((e) => planFollower.transactionStopped(e)));
  if (sc.meter !== 'none' || sc.siteLimitA !== null) {
    events.on('charger.transaction-started', kept((e) => siteFollower.sharingChanged(e)));
    events.on('charger.transaction-stopped', kept((e) => siteFollower.sharingChanged(e)));
    events.on('plan.updated', kept((e) => e.reason !== 'site-load' && siteFollower.sharingChanged(e)));
  }

  try {
    storePrices(new PriceStore(db), 
      sc.hourlyPrices.map((price, h) => ({ marketArea: 'NL', startMs: T0 + h * HOUR, durationS: 3600, pricePerMwh: price })),
      { source: 'property-test', fetchedAtMs: 0 },
    );
    void planFollower.start();
    void siteFollower.start();
    void replanner.start();
    for (const a of sc.actions) {
      act(a);
      checkSite(a);
    }
  } finally {
    void siteFollower.stop();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
  if (errors.length > 0) throw errors[0];
  return { violations, profilesBuilt };

  /**
   * The site together: the TxProfiles in force now on the connectors charging (an open
   * transaction), added up per phase (which phase a one-phase charger uses is not known, so
   * all count), never above site.limit_a.
   */
  function checkSite(after: Action): void {
    if (sc.siteLimitA === null) return;
    let sumA = 0;
    const inForce: Record<string, number> = {};
    for (const cp of CHARGE_POINTS.slice(0, sc.chargers.length)) {
      for (const t of ocpp.chargePointView(cp).openTransactions) {
        const sent = profiles.get(cp, t.connectorId);
        if (!sent || sent.purpose !== 'TxProfile' || sent.transactionId !== t.transactionId) continue;
        const ceiling = ceilingOf(cp, t.connectorId)!;
        const request = JSON.parse(sent.requestJson) as SetChargingProfileRequest;
        const schedule = request.csChargingProfiles.chargingSchedule;
        const fromS = (nowMs - Date.parse(schedule.startSchedule)) / 1000;
        if (fromS < 0 || fromS >= schedule.duration) continue;
        const p = [...schedule.chargingSchedulePeriod].reverse().find((x) => x.startPeriod <= fromS)!;
        const a = schedule.chargingRateUnit === 'A' ? p.limit : p.limit / (Math.min(p.numberPhases ?? 3, ceiling.phases) * ceiling.voltage_v);
        inForce[`${cp}/${t.connectorId}`] = a;
        sumA += a;
      }
    }
    if (sumA > sc.siteLimitA + 1e-9) violations.push({ what: 'the TxProfiles in force add up to more than site.limit_a', chargePointId: '*', connectorId: 0, detail: { after: after.kind, inForce, sumA, atMs: nowMs } });
  }

  function act(a: Action): void {
    switch (a.kind) {
      case 'target': {
        const chargePointId = cpOf(a.cp);
        const target: ChargingTarget = {
          chargePointId,
          connectorId: a.connectorId,
          marketArea: 'NL',
          departureMs: nowMs + a.departureH * HOUR,
          energyWh: a.energyWh,
          maxCurrentA: a.maxCurrentA,
          minCurrentA: a.minCurrentA,
          phases: a.phases,
          voltageV: a.voltageV,
          siteLimitA: a.siteLimitA,
          siteOtherLoadA: a.siteOtherLoadA,
          updatedAtMs: nowMs,
        };
        // Stored as asked, past the route's bounds: a row from before the config was lowered.
        targets.put(target);
        try {
          const plan = planner.plan(target, nowMs);
          events.emit('plan.updated', { chargePointId, connectorId: a.connectorId, marketArea: 'NL', reason: 'target-set', plannedAtMs: nowMs, plan });
          if (!ceilingOf(chargePointId, a.connectorId)) violations.push({ what: 'planned a connector that is not configured', chargePointId, connectorId: a.connectorId, detail: {} });
        } catch (err) {
          if (!(err instanceof ConnectorNotConfigured) || ceilingOf(chargePointId, a.connectorId)) throw err;
        }
        break;
      }
      case 'start': {
        const chargePointId = cpOf(a.cp);
        if (ocpp.chargePointView(chargePointId).openTransactions.some((t) => t.connectorId === a.connectorId)) break;
        const registerWh = registers.get(key(chargePointId, a.connectorId)) ?? 0;
        const { transaction } = sessions.startTransaction({ chargePointId, connectorId: a.connectorId, idTag: 'TAG', meterStartWh: registerWh, startedAtMs: nowMs, reservationId: null, idTagStatus: 'Accepted' }, nowMs);
        events.emit('charger.transaction-started', { chargePointId, connectorId: a.connectorId, transactionId: transaction.transactionId, startedAtMs: nowMs });
        // The central system then plans the connector's upcoming target for the transaction (applyStoredTargets).
        for (const target of targets.upcoming(nowMs).filter((t) => t.chargePointId === chargePointId && t.connectorId === a.connectorId)) {
          let plan: Plan;
          try {
            plan = planner.plan(target, nowMs);
          } catch (err) {
            if (err instanceof ConnectorNotConfigured) continue;
            throw err;
          }
          send(chargePointId, a.connectorId, plan, nowMs, target);
        }
        break;
      }
      case 'draw': {
        const chargePointId = cpOf(a.cp);
        const open = ocpp.chargePointView(chargePointId).openTransactions.find((t) => t.connectorId === a.connectorId);
        nowMs += a.minutes * 60_000;
        if (!open) break;
        const k = key(chargePointId, a.connectorId);
        const voltageV = ceilingOf(chargePointId, a.connectorId)?.voltage_v ?? 230;
        const registerWh = (registers.get(k) ?? 0) + (a.currentsA.reduce((s, x) => s + x, 0) * voltageV * a.minutes) / 60;
        registers.set(k, registerWh);
        draws.set(k, { atMs: nowMs, currentsA: a.currentsA });
        const row = (measurand: string, phase: string, value: number, unit: string) => ({ sampledAtMs: nowMs, measurand, phase, location: 'Outlet', context: 'Sample.Periodic', value, unit });
        sessions.addMeterValues(chargePointId, a.connectorId, open.transactionId, [row('Energy.Active.Import.Register', '', Math.round(registerWh), 'Wh'), ...a.currentsA.map((x, p) => row('Current.Import', `L${p + 1}`, x, 'A'))], nowMs);
        events.emit('charger.energy-measured', { chargePointId, connectorId: a.connectorId, transactionId: open.transactionId });
        break;
      }
      case 'site': {
        if (sc.meter === 'none') break;
        reading = { resourceId: SITE_METER, sampledAtMs: nowMs - a.ageS * 1000, currentsA: a.currentsA, powerW: null };
        siteFollower.sampleTaken({ resourceId: SITE_METER, sampledAtMs: reading.sampledAtMs } as MeterSample);
        break;
      }
      case 'time':
        nowMs += a.minutes * 60_000;
        // The follower's timer for a silent meter, without waiting for it.
        siteFollower.check();
        break;
      case 'prices':
        replanner.replan('NL');
        break;
      case 'stop': {
        const chargePointId = cpOf(a.cp);
        const open = ocpp.chargePointView(chargePointId).openTransactions.find((t) => t.connectorId === a.connectorId);
        if (!open) break;
        const k = key(chargePointId, a.connectorId);
        sessions.stopTransaction({ chargePointId, transactionId: open.transactionId, meterStopWh: Math.round(registers.get(k) ?? 0), stoppedAtMs: nowMs, reason: null, idTag: null }, [], nowMs);
        draws.delete(k);
        events.emit('charger.transaction-stopped', { chargePointId, connectorId: a.connectorId, transactionId: open.transactionId, stoppedAtMs: nowMs });
        break;
      }
      case 'outage': {
        const chargePointId = cpOf(a.cp);
        ocpp.recordStatus(chargePointId, { connectorId: a.connectorId, status: 'Unavailable', errorCode: 'NoError', info: null, atMs: nowMs }, nowMs);
        nowMs += 60_000;
        ocpp.recordStatus(chargePointId, { connectorId: a.connectorId, status: 'Available', errorCode: 'NoError', info: null, atMs: nowMs }, nowMs);
        events.emit('charger.connector-status', { chargePointId, connectorId: a.connectorId, status: 'Available', errorCode: 'NoError', atMs: nowMs, previous: { status: 'Unavailable', atMs: nowMs - 60_000 } });
        break;
      }
    }
  }
}

// site-load.ts counts what is below 1e-6 of a hundredth of an ampere (1e-8 A) as float noise
// when it rounds the other load up; a meter resolves milliamperes at best.
const FLOAT_NOISE_A = 1e-8;
// Locally each run explores new random cases (fast-check prints the seed of a failure to
// replay it); CI runs a fixed seed, so that a case found only today cannot fail a landing
// at random (METERGATE_FC_SEED replays any seed).
const SEED = process.env.METERGATE_FC_SEED !== undefined ? Number(process.env.METERGATE_FC_SEED) : process.env.CI ? 20261127 : undefined;

describe('configured limits are ceilings: every profile built under random clients, targets, replans, site loads and car draws', () => {
  it('never allows more than the connector, its phases, the site limit or the measured headroom; never plans a connector that is not configured', { timeout: 600_000 }, () => {
    let built = 0;
    fc.assert(
      fc.property(scenario, (sc) => {
        const { violations, profilesBuilt } = run(sc);
        built += profilesBuilt;
        expect(violations).toEqual([]);
      }),
      { numRuns: 150, ...(SEED !== undefined ? { seed: SEED } : {}) },
    );
    // The runs did build profiles (a property over none would prove nothing).
    expect(built).toBeGreaterThan(300);
  });
});
