// The plan of a stored charging target, from the prices and the forecast stored now: the
// one place that reads the stores for planning (the HTTP route, the replanning service and
// the OCPP central system share it). The planning itself stays pure (plan.ts, periods.ts).
// The energy needed counts from when the target was set (or its transaction started, if
// later): what the connector's open transaction delivered since then is already in the car,
// so the plan is for the rest. Every target is planned within the configured ceilings
// (ceilings.ts), also one stored before the config was lowered: a connector that is not
// configured is not planned at all (ConnectorNotConfigured).
import type { DeliveryReader as ChargingProgressStore } from './progress.js';
import type { FollowStateStore } from '../store/charging-follow-state.js';
import type { ChargingStrategyStore } from '../store/charging-strategies.js';
import type { ChargingStores } from './charging-stores.js';
import type { ConnectorDraws as ConnectorDrawStore } from './connector-draws.js';
import type { ChargingTargetStore, ChargingTarget } from '../store/charging-targets.js';
import type { ForecastStore } from '../store/forecasts.js';
import type { PriceStore } from '../store/prices.js';
import type { TariffOf } from '../pricing/market-tariffs.js';
import { allInPlanPeriods } from './all-in-periods.js';
import { boundLimits, type BoundedLimits, type CeilingClamp, type ConnectorCeiling } from './ceilings.js';
import type { ChargerLimits } from './limits.js';
import { planPeriods } from './periods.js';
import { planCharging, type Plan, type PlanPeriod } from './plan.js';
import type { SiteContext } from './site-context.js';
import { siteOtherLoad, type ConnectorDraw, type SiteLoad } from './site-load.js';
import { limitedShare, siteHeadroomA, type LimitedShare } from './share-limits.js';
import { capacityLimit, type CapacityLimit } from './capacity-limit.js';
import { newPeakCost } from './capacity.js';
import { dimmedChargerCurrentA } from './dimmed-limit.js';
import type { ExternalLimits } from './external-limit.js';
import { chargeNowPeriod, chargeNowTarget, isChargeNow, type ChargeNowTarget } from './charge-now.js';

/** From an hour back: the period under way started before now. */
const LOOKBACK_MS = 3_600_000;

/** A target's plan with the site limit it was made under: the lower of the target's and the configured one, less the other load. */
export interface TargetPlan extends Plan {
  /** The target's limits within the configured ceilings (before the car's observed draw and the site's share lower them). */
  readonly limits: BoundedLimits;
  /** What the ceilings lowered of what the stored target asks for (empty when it asks for nothing more than configured). */
  readonly clamps: readonly CeilingClamp[];
  readonly site: {
    readonly limitA: number;
    /** The other load per phase the plan subtracted (A): the site meter's, else what the client said. */
    readonly otherLoadA: number | null;
    /** How the site meter's reading became the other load; null without a site meter. */
    readonly meter: SiteLoad | null;
    /** How the headroom (limit − other load) was shared with the other connectors planned on the site (site-share.ts). */
    readonly share: { readonly connectors: number; readonly headroomA: number; readonly shareA: number };
    /** The most phases a sharing connector uses, and the voltage: a current per phase as power. */
    readonly limitPhases: number;
    readonly voltageV: number;
    /** The capacity cap (site.capacity, capacity-limit.ts) that lowered the headroom where it is lower than the fuse's; absent without site.capacity. */
    readonly capacity?: CapacityLimit;
    /**
     * The grid operator's dimming in force (§14a EnWG, grid/grid-control.ts): the power left to
     * the controlled chargers together and this connector's share of it, shared by the same
     * rule; share.shareA is the lower of the two shares. null while not dimmed.
     */
    readonly dimmed: { readonly limitW: number; readonly fixedLoadsW: number; readonly chargersA: number; readonly shareA: number } | null;
  } | null;
  /** The capacity tariff's part of the plan (site.capacity); null without it. */
  readonly capacity: PlanCapacity | null;
  /** The car's observed maximum draw in this transaction, planned with instead of the charger's limits (car-draw.ts); null before one is learnt. */
  readonly observed: { readonly maxCurrentA: number; readonly phases: number; readonly atMs: number } | null;
  /** Energy the connector's open transaction delivered towards the target, taken off what it needs (0 without one). */
  readonly deliveredWh: number;
}

/**
 * What the capacity tariff did to a plan (docs/planning.md "The capacity peak"): the cap it
 * kept the quarter-hour under, and, where the departure cannot be met under it, the least
 * new peak that meets it with its cost (applied when site.capacity.raise_peak_for_departure).
 */
export interface PlanCapacity {
  readonly limit: CapacityLimit;
  /** Whether the cap lowered the site's headroom below the fuse's. */
  readonly binding: boolean;
  readonly newPeak: {
    /** The month's peak the plan sets (kW): the cap plus the raise. */
    readonly peakKw: number;
    readonly raiseKw: number;
    /** raiseKw × site.capacity.eur_per_kw_month, in the prices' currency. */
    readonly cost: number;
    /** Whether the plan uses it (raise_peak_for_departure), or only says what meeting the departure would cost. */
    readonly applied: boolean;
    /** Whether the departure is met with it (false: not even the fuse's headroom meets it; the raise is the most the fuse allows). */
    readonly meetsTarget: boolean;
  } | null;
  /** The planned energy's expected cost plus the new peak's cost where applied. */
  readonly totalCostExpected: number;
}

/** Precision of the least raise of the cap that meets a departure (kW). */
const RAISE_STEP_KW = 0.05;

/** A share less the margin, but not below the minimum current when the share reaches it. */
const floor2 = (v: number) => Math.floor(v * 100 + 1e-9) / 100;

const withMargin = (shareA: number, minCurrentA: number, marginA: number) => (shareA >= minCurrentA ? Math.max(minCurrentA, shareA - marginA) : shareA);

const keyOf = (t: { chargePointId: string; connectorId: number }) => `${t.chargePointId}\u0000${t.connectorId}`;

type OpenConnector = ReturnType<ConnectorDrawStore['openConnectors']>[number];

/**
 * What the fuse controller (ocpp/fuse-controller.ts) tells the planner about a connector
 * sharing the site: the current the others must count it at, when it is not shared as usual
 * (its limit in force unknown, or its lowering overdue: its maximum; connector-control.ts
 * countedA), else null.
 */
export interface ConnectorCounting {
  /** `openTransactionId`: the connector's open transaction as the planner just read it (null: none, a restart pending). */
  countedA(chargePointId: string, connectorId: number, openTransactionId: number | null, nowMs: number): number | null;
  /**
   * Whether it controls cars with no target too (charge-now.ts): only then do they share the
   * site as planned connectors do; else each counts at its maximum (untargetedDrawA), since
   * nothing would lower it.
   */
  readonly controlsChargeNow?: boolean;
}

/**
 * The grid operator's dimming as the planner needs it (grid/grid-control.ts): the power the
 * controlled chargers and the fixed loads behind the energy manager may draw together, or
 * null while not dimmed.
 */
export interface GridLimit {
  dimmedAt(nowMs: number): { readonly limitW: number; readonly fixedLoadsW: number } | null;
}

/** A target for a charger or connector that is not in the config: it has no ceilings, so it is never planned. */
export class ConnectorNotConfigured extends Error {
  constructor(
    readonly chargePointId: string,
    readonly connectorId: number,
    readonly chargerConfigured: boolean,
  ) {
    super(
      chargerConfigured
        ? `connector ${connectorId} of charge point ${chargePointId} is not configured (chargers[].connectors lists each connector with its limits)`
        : `charge point ${chargePointId} is not configured (chargers[].id)`,
    );
    this.name = 'ConnectorNotConfigured';
  }
}

/** A target with its limits within the ceilings. */
interface BoundedTarget {
  readonly target: ChargingTarget;
  readonly ceiling: ConnectorCeiling;
  readonly limits: BoundedLimits;
  readonly clamps: readonly CeilingClamp[];
}

export class TargetPlanner {
  private readonly prices: PriceStore;
  private readonly forecasts: ForecastStore;
  private readonly progress: ChargingProgressStore;
  private readonly draws: ConnectorDrawStore;
  private readonly targets: ChargingTargetStore;
  private readonly follow: FollowStateStore;
  private readonly strategies: ChargingStrategyStore;
  private counting: ConnectorCounting | null = null;
  private grid: GridLimit | null = null;
  private external: ExternalLimits | null = null;

  constructor(
    /** The shared charging stores (store/charging-stores.ts), built once by daemon.ts. */
    stores: Pick<ChargingStores, 'prices' | 'forecasts' | 'progress' | 'draws' | 'targets' | 'follow' | 'strategies'>,
    private readonly forecastEnabled: boolean,
    /** The configured site limit, connectors and site meter (planning/site-context.ts). */
    private readonly site: SiteContext,
    /** The market's tariff in force at an instant (config tariffs): with one, plans are made on the all-in price per kWh. */
    private readonly tariffOf: TariffOf = () => undefined,
  ) {
    this.prices = stores.prices;
    this.forecasts = stores.forecasts;
    this.progress = stores.progress;
    this.draws = stores.draws;
    this.targets = stores.targets;
    this.follow = stores.follow;
    this.strategies = stores.strategies;
  }

  /** The fuse controller's counting of the connectors it controls (set once it is built; before, every connector is shared as usual). */
  useCounting(counting: ConnectorCounting): void {
    this.counting = counting;
  }

  /** The grid operator's dimming (set once the grid control starts; before, nothing is dimmed). */
  useGridLimit(grid: GridLimit): void {
    this.grid = grid;
  }

  /** Limits set on connectors by systems other than the gateway (external-limit.ts; set by the central system). */
  useExternalLimits(external: ExternalLimits): void {
    this.external = external;
  }

  /** Energy the connector's open transaction delivered towards the target (0 without one). */
  private deliveredWh(target: ChargingTarget): number {
    return this.progress.delivery(target.chargePointId, target.connectorId, target.updatedAtMs)?.deliveredWh ?? 0;
  }

  /**
   * The target's plan now. `siteMarginA` keeps the connector that much under its share of
   * the site (not below its minimum current): the site follower plans with it so that a load
   * that wobbles by less does not lower the current again on the next reading.
   * `shareAskA` lets the connector take up to that much in the site's share (more than its
   * maximum: a car stopped for the site asks whether its current plus the hysteresis fits);
   * `site.share.shareA` then says what it would get, the plan itself stays within the maximum.
   */
  plan(target: ChargingTarget, nowMs: number, opts: { readonly siteMarginA?: number; readonly shareAskA?: number } = {}): TargetPlan {
    const bounded = this.bounded(target);
    if (!bounded) throw new ConnectorNotConfigured(target.chargePointId, target.connectorId, this.site.ceilings.chargePointConfigured(target.chargePointId));
    const fromMs = nowMs - LOOKBACK_MS;
    // A car with no target (charge-now.ts): its maximum from now on within its share, not a price plan.
    const chargeNow = isChargeNow(target);
    const forecast = this.forecastEnabled && !chargeNow ? this.forecasts.periods(target.marketArea, fromMs, target.departureMs) : [];
    const observed = this.observedDraw(target);
    const limits = this.externallyLimited(target, this.effectiveLimits(bounded.limits, observed), nowMs);
    const deliveredWh = chargeNow ? 0 : this.deliveredWh(target);
    const periods = chargeNow ? [chargeNowPeriod(target, nowMs)] : this.periodsOf(target.marketArea, fromMs, target.departureMs, forecast);
    const planUnder = (raiseKw: number) => {
      const site = this.siteOf(bounded, nowMs, opts.shareAskA, raiseKw);
      const plan = planCharging({
        nowMs,
        departureMs: target.departureMs,
        energyWh: Math.max(0, target.energyWh - deliveredWh),
        // The site's share caps the connector's current; the share already is within the headroom.
        charger: { ...limits, maxCurrentA: site === null ? limits.maxCurrentA : Math.min(limits.maxCurrentA, withMargin(site.share.shareA, limits.minCurrentA, opts.siteMarginA ?? 0)) },
        site: site === null ? undefined : { limitA: site.limitA, otherLoadA: site.otherLoadA ?? undefined },
        periods,
      });
      return { plan, site };
    };
    const under = planUnder(0);
    // A charge-now plan never meets its (unbounded) energy: no new peak is ever set for it.
    const { plan, site, capacity } = this.withCapacity(under, chargeNow ? () => under : planUnder, chargeNow);
    return { ...plan, limits: bounded.limits, clamps: bounded.clamps, site, observed, deliveredWh, capacity };
  }

  /**
   * The capacity tariff's part (docs/planning.md "The capacity peak"): a plan that meets its
   * departure under the cap stays so. One that does not, where the cap (not the fuse) holds it
   * back, is made again with the cap raised by the least (to RAISE_STEP_KW) that meets the
   * departure within the fuse; with raise_peak_for_departure that plan is used and the new
   * peak's cost is part of its cost, else the plan under the cap stays and says what the
   * departure would cost.
   */
  private withCapacity(
    under: { plan: Plan; site: TargetPlan['site'] },
    planUnder: (raiseKw: number) => { plan: Plan; site: TargetPlan['site'] },
    noRaise = false,
  ): { plan: Plan; site: TargetPlan['site']; capacity: PlanCapacity | null } {
    const limit = under.site?.capacity;
    const settings = this.site.capacity?.settings;
    if (!limit || !settings || !under.site) return { ...under, capacity: null };
    const binding = limit.headroomA < this.fuseHeadroomA(under.site) - 1e-9;
    const view = (plan: Plan, site: TargetPlan['site'], newPeak: PlanCapacity['newPeak']): { plan: Plan; site: TargetPlan['site']; capacity: PlanCapacity } => ({
      plan,
      site,
      capacity: { limit: site?.capacity ?? limit, binding, newPeak, totalCostExpected: plan.planned.cost.expected + (newPeak?.applied ? newPeak.cost : 0) },
    });
    if (noRaise || under.plan.meetsTarget || !binding || limit.state === 'stale') return view(under.plan, under.site, null);
    // The most the fuse allows: the raise at which the cap stops binding.
    const fuseKw = (this.fuseHeadroomA(under.site) * under.site.limitPhases * under.site.voltageV) / 1000;
    const maxRaiseKw = Math.max(0, fuseKw - limit.allowedKw);
    const top = planUnder(maxRaiseKw);
    // Something else holds it back too (the §14a dimming, no prices to the departure): a new peak would not help.
    if (!top.plan.meetsTarget && top.plan.planned.energyWh <= under.plan.planned.energyWh + 1e-6) return view(under.plan, under.site, null);
    let lowKw = 0;
    let highKw = maxRaiseKw;
    let best = top;
    if (top.plan.meetsTarget) {
      while (highKw - lowKw > RAISE_STEP_KW) {
        const midKw = (lowKw + highKw) / 2;
        const tried = planUnder(midKw);
        if (tried.plan.meetsTarget) {
          highKw = midKw;
          best = tried;
        } else lowKw = midKw;
      }
    }
    const raiseKw = Math.ceil(highKw / RAISE_STEP_KW) * RAISE_STEP_KW;
    const peakKw = limit.limitKw + raiseKw + settings.marginKw;
    const newPeak = { peakKw: round3(peakKw), raiseKw: round3(raiseKw), cost: round4(newPeakCost(limit.capKw, peakKw, settings.eurPerKwMonth)), applied: settings.raisePeakForDeparture, meetsTarget: best.plan.meetsTarget };
    return settings.raisePeakForDeparture ? view(best.plan, best.site, newPeak) : view(under.plan, under.site, newPeak);
  }

  /** The site's headroom under the fuse alone (limit − other load, A). */
  private fuseHeadroomA(site: NonNullable<TargetPlan['site']>): number {
    return siteHeadroomA(site.limitA, site.otherLoadA);
  }

  /** The periods to plan over: day-ahead (else forecast) prices, all-in under the market's tariff (all-in-periods.ts). */
  private periodsOf(marketArea: string, fromMs: number, departureMs: number, forecast: Parameters<typeof planPeriods>[1]): PlanPeriod[] {
    const periods = planPeriods(this.prices.native(marketArea, fromMs, departureMs), forecast);
    // A market without any tariff keeps its periods exactly as they are.
    return this.tariffOf(marketArea, Number.MAX_SAFE_INTEGER) ? allInPlanPeriods(periods, (atMs) => this.tariffOf(marketArea, atMs)) : periods;
  }

  /**
   * The target's limits within the configured ceilings (ceilings.ts) and what they lowered;
   * null for a charger or connector that is not configured (it is never planned).
   */
  bounded(target: ChargingTarget): BoundedTarget | null {
    const ceiling = this.site.ceilings.connector(target.chargePointId, target.connectorId);
    if (!ceiling) return null;
    const { limits, clamps } = boundLimits(target, ceiling, this.site.limitA);
    return { target, ceiling, limits, clamps };
  }

  /** The connector's configured limits (its ceiling), or null when it is not configured. */
  ceilingOf(chargePointId: string, connectorId: number): ConnectorCeiling | null {
    return this.site.ceilings.connector(chargePointId, connectorId);
  }

  /** The car's observed maximum draw, learnt in the connector's open transaction (car-draw.ts), or null. */
  observedDraw(target: ChargingTarget): TargetPlan['observed'] {
    const state = this.follow.get(target.chargePointId, target.connectorId);
    if (state.observedMaxCurrentA === null || state.observedTransactionId === null) return null;
    if (this.draws.openTransactionId(target.chargePointId, target.connectorId) !== state.observedTransactionId) return null;
    return { maxCurrentA: state.observedMaxCurrentA, phases: state.observedPhases ?? target.phases, atMs: state.observedAtMs ?? 0 };
  }

  /** The target's limits (within the ceilings), lowered to what the car was seen to draw (never raised by it). */
  private effectiveLimits(bounded: BoundedLimits, observed: TargetPlan['observed']): ChargerLimits {
    const limits = { maxCurrentA: bounded.maxCurrentA, minCurrentA: bounded.minCurrentA, phases: bounded.phases, voltageV: bounded.voltageV };
    if (!observed) return limits;
    // Never below the minimum current: a charger cannot signal less, so a car that draws less is planned at it.
    return { ...limits, maxCurrentA: Math.max(limits.minCurrentA, Math.min(limits.maxCurrentA, observed.maxCurrentA)), phases: Math.min(limits.phases, observed.phases) };
  }

  /**
   * The limits lowered to an external limit in force on the connector (external-limit.ts),
   * never below its minimum current (a charger cannot signal less; the station holds the car
   * at its own limit anyway).
   */
  private externallyLimited(target: ChargingTarget, limits: ChargerLimits, nowMs: number): ChargerLimits {
    const externalA = this.external?.externalLimitA(target.chargePointId, target.connectorId, nowMs, limits) ?? null;
    if (externalA === null || externalA >= limits.maxCurrentA) return limits;
    return { ...limits, maxCurrentA: Math.max(limits.minCurrentA, externalA) };
  }

  /**
   * The site limit (the lower of the target's and the configured one), the other load (the
   * site meter's, else the client's) and this connector's share of the rest with every other
   * connector planned on the site now (a target in force and an open transaction).
   */
  private siteOf(bounded: BoundedTarget, nowMs: number, shareAskA?: number, capacityRaiseKw = 0): TargetPlan['site'] {
    const { target } = bounded;
    const dimmedNow = this.grid?.dimmedAt(nowMs) ?? null;
    const fuseLimitA = bounded.limits.siteLimitA;
    if (fuseLimitA === null && dimmedNow === null) return null;
    const { sharing, upcoming, openTransactionIds, chargeNowKeys, open } = this.sharing(bounded, nowMs);
    const connectors = sharing.map((b) => {
      const limits = this.effectiveLimits(b.limits, this.observedDraw(b.target));
      const maxCurrentA = b === bounded && shareAskA !== undefined ? Math.max(limits.maxCurrentA, shareAskA) : limits.maxCurrentA;
      const countedA = b === bounded ? null : (this.counting?.countedA(b.target.chargePointId, b.target.connectorId, openTransactionIds.get(keyOf(b.target)) ?? null, nowMs) ?? null);
      return { key: keyOf(b.target), maxCurrentA, minCurrentA: limits.minCurrentA, departureMs: b.target.departureMs, countedA };
    });
    // The dimmed power as current per phase at the connectors' voltage, on the most phases any
    // of them uses (a 1-phase car is then shared less than it could draw: on the safe side).
    // Every charger without a target in force counts at its maximum (no site meter helps here:
    // the rule limits what the controllable devices draw, not the site's connection).
    let dimmedTotal: { readonly limitW: number; readonly fixedLoadsW: number; readonly chargersA: number; readonly leftA: number } | null = null;
    if (dimmedNow) {
      const phases = Math.max(...sharing.map((b) => b.limits.phases));
      const chargersA = dimmedChargerCurrentA(dimmedNow.limitW, dimmedNow.fixedLoadsW, bounded.limits.voltageV, phases);
      dimmedTotal = { limitW: dimmedNow.limitW, fixedLoadsW: dimmedNow.fixedLoadsW, chargersA, leftA: chargersA - this.untargetedDrawA(bounded, upcoming, chargeNowKeys, open, nowMs, null) };
    }
    const dimmedOf = (share: LimitedShare): NonNullable<TargetPlan['site']>['dimmed'] =>
      dimmedTotal === null ? null : { limitW: dimmedTotal.limitW, fixedLoadsW: dimmedTotal.fixedLoadsW, chargersA: dimmedTotal.chargersA, shareA: share.dimmedShareA! };
    if (fuseLimitA === null) {
      // Dimmed without a site limit: the dimmed total is the only limit (no other load to take off it).
      const share = limitedShare({ siteHeadroomA: null, dimmedA: dimmedTotal!.leftA }, connectors, keyOf(target));
      const limitPhases = Math.max(...sharing.map((b) => b.limits.phases));
      return { limitA: dimmedTotal!.chargersA, otherLoadA: null, meter: null, share: { connectors: sharing.length, headroomA: dimmedTotal!.chargersA, shareA: share.shareA }, limitPhases, voltageV: bounded.limits.voltageV, dimmed: dimmedOf(share) };
    }
    const limitA = fuseLimitA;
    const meter = this.site.meter;
    let otherLoadA = target.siteOtherLoadA;
    let load: SiteLoad | null = null;
    if (meter) {
      load = siteOtherLoad({
        nowMs,
        resourceId: meter.resourceId,
        reading: meter.reading(),
        ownDraw: meter.settings.includesChargers ? this.plannedDraw(sharing, nowMs, meter.settings.maxReadingAgeMs) : null,
        limitA,
        // Without a fresh reading only the configured minimum is safe: a client's higher minimum then waits.
        minCurrentA: bounded.ceiling.minCurrentA,
        clientOtherLoadA: target.siteOtherLoadA ?? 0,
        settings: meter.settings,
      });
      otherLoadA = load.otherLoadA;
    }
    const fuseHeadroomA = siteHeadroomA(limitA, otherLoadA);
    // The capacity cap (site.capacity) where it leaves less than the fuse.
    const capacity = this.capacityOf(sharing, nowMs, capacityRaiseKw);
    const headroomA = capacity ? Math.min(fuseHeadroomA, capacity.headroomA) : fuseHeadroomA;
    // Dimmed (§14a): the lower of the site's share and the dimmed one (share-limits.ts), rounded
    // down, as a share given to the charger must not grow by rounding.
    const share = limitedShare({ siteHeadroomA: headroomA - this.untargetedDrawA(bounded, upcoming, chargeNowKeys, open, nowMs, load), dimmedA: dimmedTotal?.leftA ?? null }, connectors, keyOf(target));
    const phases = Math.max(...sharing.map((b) => b.limits.phases));
    return {
      limitA,
      otherLoadA,
      meter: load,
      share: { connectors: sharing.length, headroomA: floor2(headroomA), shareA: share.shareA },
      limitPhases: phases,
      voltageV: this.site.meter?.settings.voltageV ?? bounded.limits.voltageV,
      ...(capacity ? { capacity } : {}),
      dimmed: dimmedOf(share),
    };
  }

  /**
   * The capacity cap now (capacity-limit.ts) for the connectors sharing the site, or null
   * without site.capacity: the site meter's power and quarter-hour demand, less what the
   * planned connectors measurably draw (when the meter measures the chargers).
   */
  private capacityOf(sharing: readonly BoundedTarget[], nowMs: number, raiseKw: number): CapacityLimit | null {
    const source = this.site.capacity;
    const meter = this.site.meter;
    if (!source || !meter) return null;
    const reading = meter.reading();
    const voltageV = meter.settings.voltageV;
    const draw = meter.settings.includesChargers ? this.plannedDraw(sharing, nowMs, meter.settings.maxReadingAgeMs) : null;
    return capacityLimit({
      nowMs,
      demand: source.demand(),
      sitePower: reading && reading.powerW !== null ? { w: reading.powerW, sampledAtMs: reading.sampledAtMs } : null,
      plannedChargingW: draw ? draw.currentsA.reduce((sum, a) => sum + Math.max(0, a), 0) * voltageV : null,
      // The most phases any sharing connector uses: a share of current per phase then never gives more power than allowed.
      phases: Math.max(...sharing.map((b) => b.limits.phases)),
      voltageV,
      settings: source.settings,
      raiseKw,
    });
  }

  /**
   * Whether the connector has no transaction but a car stopped for the site whose restart
   * went out (remote-start-stop, paused, a non-zero site cap stored with the restart,
   * ocpp/site-follower.ts): it draws its current as soon as the charger starts it.
   */
  restartPending(chargePointId: string, connectorId: number): boolean {
    if (this.draws.openTransactionId(chargePointId, connectorId) !== null) return false;
    const strategy = this.strategies.get(chargePointId, connectorId);
    if (strategy?.strategy !== 'remote-start-stop' || strategy.pausedTransactionId === null) return false;
    return (this.follow.get(chargePointId, connectorId).siteCapA ?? 0) > 0;
  }

  /**
   * The target and every other one in force whose connector has a car plugged in (an open
   * transaction) or a restart pending (it draws as soon as it starts: counted, so no other is
   * raised into its current meanwhile), each within its ceilings; one not configured is not planned.
   * With every target in force and each other's open transaction as read here: the rest of
   * siteOf uses them rather than asking the stores again (a site-meter reading plans every
   * connector, so each read here is paid N² times per reading).
   */
  private sharing(bounded: BoundedTarget, nowMs: number): { sharing: BoundedTarget[]; upcoming: ChargingTarget[]; openTransactionIds: Map<string, number | null>; chargeNowKeys: Set<string>; open: OpenConnector[] } {
    const upcoming = this.targets.upcoming(nowMs);
    const openTransactionIds = new Map<string, number | null>();
    const others: BoundedTarget[] = [];
    for (const t of upcoming) {
      const key = keyOf(t);
      if (key === keyOf(bounded.target)) continue;
      const transactionId = this.draws.openTransactionId(t.chargePointId, t.connectorId);
      if (transactionId === null && !this.restartPending(t.chargePointId, t.connectorId)) continue;
      const b = this.bounded(t);
      if (!b) continue;
      openTransactionIds.set(key, transactionId);
      others.push(b);
    }
    // Every car charging with no target shares the site as a planned one does (charge-now.ts).
    const chargeNowKeys = new Set<string>();
    // Read once per plan: untargetedDrawA goes over the same open connectors.
    const open = this.draws.openConnectors();
    for (const { target: t, transactionId } of this.chargeNowTargets(nowMs, upcoming, open)) {
      const key = keyOf(t);
      chargeNowKeys.add(key);
      if (key === keyOf(bounded.target)) continue;
      const b = this.bounded(t);
      if (!b) continue;
      openTransactionIds.set(key, transactionId);
      others.push(b);
    }
    return { sharing: [bounded, ...others], upcoming, openTransactionIds, chargeNowKeys, open };
  }

  /**
   * The connectors the fuse controller controls with a charge-now plan (charge-now.ts): an
   * open transaction and no target in force, configured, without a default_target (its
   * transaction gets a plan of its own) and not on remote-start-stop (a car without profiles
   * is counted at its maximum, untargetedDrawA). `upcoming`: the targets in force, where
   * already read.
   */
  chargeNowTargets(nowMs: number, upcoming: readonly ChargingTarget[] = this.targets.upcoming(nowMs), openConnectors?: readonly OpenConnector[]): Array<{ target: ChargeNowTarget; transactionId: number }> {
    if (this.counting?.controlsChargeNow !== true) return [];
    const planned = new Set(upcoming.map(keyOf));
    const out: Array<{ target: ChargeNowTarget; transactionId: number }> = [];
    for (const open of openConnectors ?? this.draws.openConnectors()) {
      if (planned.has(keyOf(open))) continue;
      const ceiling = this.site.ceilings.connector(open.chargePointId, open.connectorId);
      if (!ceiling || ceiling.hasDefaultTarget) continue;
      if (this.strategies.get(open.chargePointId, open.connectorId)?.strategy === 'remote-start-stop') continue;
      out.push({ target: chargeNowTarget(open.chargePointId, open.connectorId, ceiling, upcoming[0]?.marketArea ?? '', nowMs), transactionId: open.transactionId });
    }
    return out;
  }

  /**
   * What the cars charging with no target in force draw beyond what the site meter already
   * shows of them (docs/planning.md "The fuse controller"): each counts at the larger of its
   * connector's configured maximum and its measured current, since it may draw up to its
   * charger's maximum at any moment. A site meter that measures the chargers (a fresh
   * reading) already holds its measured draw, so only the rest up to that is added; without
   * one, all of it. A connector that is not configured counts at its measured current (the
   * config check refuses a site whose limit could then not be a ceiling, unless told).
   */
  private untargetedDrawA(bounded: BoundedTarget, upcoming: readonly ChargingTarget[], chargeNowKeys: ReadonlySet<string>, openConnectors: readonly OpenConnector[], nowMs: number, load: SiteLoad | null): number {
    const planned = new Set(upcoming.map(keyOf));
    planned.add(keyOf(bounded.target));
    // Cars with a charge-now plan share the site as planned ones (sharing, which found them): not counted here too.
    for (const key of chargeNowKeys) planned.add(key);
    const maxAgeMs = this.site.meter?.settings.maxReadingAgeMs ?? 60_000;
    const inMeter = this.site.meter?.settings.includesChargers === true && load?.state === 'measured';
    let sumA = 0;
    for (const open of openConnectors) {
      if (planned.has(keyOf(open))) continue;
      const ceiling = this.site.ceilings.connector(open.chargePointId, open.connectorId);
      const draw = this.draws.latest(open.chargePointId, open.connectorId, ceiling?.phases ?? 3, ceiling?.voltageV ?? 230);
      const measuredA = draw && Math.abs(nowMs - draw.sampledAtMs) <= maxAgeMs ? Math.max(0, ...draw.currentsA) : 0;
      const countedA = Math.max(ceiling?.maxCurrentA ?? 0, measuredA);
      sumA += Math.max(0, countedA - (inMeter ? measuredA : 0));
    }
    return sumA;
  }

  /**
   * What the planned connectors draw together per phase (their chargers' latest measured
   * currents, each if measured within maxAgeMs): taken off a site meter that measures the
   * chargers too. None known: null (nothing taken off, the other load counts too high).
   */
  private plannedDraw(sharing: readonly BoundedTarget[], nowMs: number, maxAgeMs: number): ConnectorDraw | null {
    let sum: [number, number, number] | null = null;
    let sampledAtMs = nowMs;
    for (const { target: t, limits } of sharing) {
      const d = this.draws.latest(t.chargePointId, t.connectorId, limits.phases, limits.voltageV);
      if (!d || Math.abs(nowMs - d.sampledAtMs) > maxAgeMs) continue;
      sum = sum ? (sum.map((a, i) => a + d.currentsA[i]!) as [number, number, number]) : [...d.currentsA];
      sampledAtMs = Math.min(sampledAtMs, d.sampledAtMs);
    }
    return sum ? { sampledAtMs, currentsA: sum } : null;
  }
}

const round3 = (v: number) => Math.round(v * 1000) / 1000;
const round4 = (v: number) => Math.round(v * 10000) / 10000;
