// Records what a completed charger session came to, with its StopTransaction (inside the
// same SQLite transaction, store/ocpp.ts stopTransaction's onStopped): the actual cost by
// the CDR's rule (its readings cut to its window, priced on the stored day-ahead periods),
// the cost of charging the same energy immediately (both under the market's tariff, if any) (planning/session-outcome.ts), and the
// plan it ran under. Costs that cannot be computed at the stop (prices not stored, a
// connector meter not read past the end yet) are left NULL with the reason: a read
// (GET …/transactions/{id}) computes them without storing (GETs change nothing), and
// priceOutstanding stores them once they can be (after a price update). I/O here; the rule is pure.
import { Gauge, type Registry } from 'prom-client';
import { sessionMaxEdgeGapMs } from '../config/derived.js';
import type { Config } from '../config/types.js';
import { allowedCurrentA, DEFAULT_CHARGER_LIMITS, powerAtW } from '../planning/limits.js';
import { sessionOutcomeCost } from '../planning/session-outcome.js';
import { marketByCode, nativeResolutionS } from '../prices/markets.js';
import { checkReadings, type EnergyReading } from '../pricing/session-cost.js';
import { marketTariffs, type TariffOf } from '../pricing/market-tariffs.js';
import { clipToWindow, unboundedEdges } from '../pricing/session-window.js';
import { ChargingProfileStore } from '../store/charging-profiles.js';
import { ChargingTargetStore } from '../store/charging-targets.js';
import { suspectReadings } from '../store/clock-steps.js';
import type { ChargerView } from '../ops/observability/views.js';
import type { Db } from '../store/db.js';
import type { TransactionRecord } from '../store/ocpp.js';
import { chargerSessionId } from './charger-session-id.js';
import { PriceStore } from '../store/prices.js';
import { SessionOutcomeStore, type OutcomeTotals, type SessionOutcome } from '../store/session-outcomes.js';
import { SessionStore } from '../store/sessions.js';

/** Unpriced outcomes read at a time by priceOutstanding (bounds its memory, not how many it looks at). */
const OUTSTANDING_PAGE = 500;

const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

export class SessionOutcomeRecorder {
  private readonly outcomes: SessionOutcomeStore;
  private readonly sessions: SessionStore;
  private readonly targets: ChargingTargetStore;
  private readonly profiles: ChargingProfileStore;
  private readonly prices: PriceStore;
  private readonly maxEdgeGapMs: number;
  private readonly tariffOf: TariffOf;

  constructor(
    private readonly db: Db,
    private readonly config: Pick<Config, 'poll' | 'sessions' | 'chargers' | 'tariffs'>,
  ) {
    this.outcomes = new SessionOutcomeStore(db);
    this.sessions = new SessionStore(db);
    this.targets = new ChargingTargetStore(db);
    this.profiles = new ChargingProfileStore(db);
    this.prices = new PriceStore(db);
    this.maxEdgeGapMs = sessionMaxEdgeGapMs(config);
    this.tariffOf = marketTariffs(config.tariffs);
  }

  /** At the stop: records the outcome of the stopped transaction (its session completed just before, in the same transaction). */
  record(tx: TransactionRecord, nowMs: number): SessionOutcome {
    const plan = this.profiles.transactionPlan(tx.transactionId);
    const { maxPowerW, source } = this.maxPower(tx);
    const base: SessionOutcome = {
      transactionId: tx.transactionId,
      recordedAtMs: nowMs,
      pricedAtMs: null,
      currency: null,
      energyWh: null,
      actualCost: null,
      immediateCost: null,
      immediateMaxPowerW: maxPowerW,
      immediatePowerSource: source,
      immediateEndMs: null,
      unpricedReason: null,
      planned: plan !== undefined,
      planPlannedAtMs: plan?.plannedAtMs ?? null,
      planExpectedCost: plan?.expectedCost ?? null,
      planImmediateCost: plan?.immediateCost ?? null,
      planEnergyNeededWh: plan?.energyNeededWh ?? null,
    };
    const outcome = this.priced(tx, base, nowMs);
    this.outcomes.put(outcome);
    return outcome;
  }

  /** The stored outcome, priced now (not stored: a read changes nothing) if it could not be at the stop. */
  get(tx: TransactionRecord, nowMs: number): SessionOutcome | undefined {
    const stored = this.outcomes.get(tx.transactionId);
    if (!stored || stored.pricedAtMs !== null) return stored;
    return this.priced(tx, stored, nowMs);
  }

  /**
   * Stores the costs of outcomes that could not be priced before and can now (after prices
   * arrived); how many. Every unpriced outcome is looked at, a page at a time: some can
   * never be priced (prices the source does not have, register values that decrease), and
   * however many of them there are, a later one that can be is stored priced.
   */
  priceOutstanding(transaction: (transactionId: number) => TransactionRecord | undefined, nowMs: number): number {
    let n = 0;
    for (let after = 0, page = this.outcomes.unpriced(after, OUTSTANDING_PAGE); page.length > 0; page = this.outcomes.unpriced(after, OUTSTANDING_PAGE)) {
      for (const stored of page) {
        after = stored.transactionId;
        const tx = transaction(stored.transactionId);
        if (!tx) continue;
        const again = this.priced(tx, stored, nowMs);
        if (again.pricedAtMs === null) continue;
        this.outcomes.put(again);
        n++;
      }
    }
    return n;
  }

  /** What the status page shows of the charger's most recently stopped session. */
  lastOfCharger(chargePointId: string): ChargerView['lastSession'] {
    const o = this.outcomes.lastOfCharger(chargePointId);
    if (!o) return null;
    return { session: chargerSessionId(chargePointId, o.transactionId), planned: o.planned, energyWh: o.energyWh, currency: o.currency, actualCost: o.actualCost, immediateCost: o.immediateCost, unpricedReason: o.unpricedReason };
  }

  /**
   * The connector's maximum allowed power: its charging target's limits (the charger's
   * maximum current, lowered by the site limit) when it has one, else the connector's
   * configured limits (chargers[].connectors), else the default charger (16 A on 3 phases
   * at 230 V, as a plan without charger limits assumes).
   */
  private maxPower(tx: TransactionRecord): { maxPowerW: number; source: 'charging-target' | 'connector-config' | 'default' } {
    const target = this.targets.get(tx.chargePointId, tx.connectorId);
    if (target) {
      const limits = { maxCurrentA: target.maxCurrentA, minCurrentA: target.minCurrentA, phases: target.phases, voltageV: target.voltageV };
      const site = target.siteLimitA === null ? undefined : { limitA: target.siteLimitA, otherLoadA: target.siteOtherLoadA ?? undefined };
      // A site limit that leaves less than the minimum current: the charger's own maximum.
      const currentA = allowedCurrentA(limits, site) || limits.maxCurrentA;
      return { maxPowerW: powerAtW(limits, currentA), source: 'charging-target' };
    }
    const connector = this.config.chargers.find((c) => c.id === tx.chargePointId)?.connectors?.find((c) => c.connector_id === tx.connectorId);
    if (connector) return { maxPowerW: connector.max_current_a * connector.phases * connector.voltage_v, source: 'connector-config' };
    return { maxPowerW: powerAtW(DEFAULT_CHARGER_LIMITS, DEFAULT_CHARGER_LIMITS.maxCurrentA), source: 'default' };
  }

  private priced(tx: TransactionRecord, base: SessionOutcome, nowMs: number): SessionOutcome {
    const session = this.sessions.get(chargerSessionId(tx.chargePointId, tx.transactionId), true);
    const market = session ? marketByCode(session.marketArea) : undefined;
    if (!session || session.endMs === null || !market) return { ...base, unpricedReason: 'the session is not completed or its market is unknown' };
    const readings = this.readingsInWindow(session.readings, session.resourceId, session.startMs, session.endMs, nowMs);
    if (typeof readings === 'string') return { ...base, unpricedReason: readings };
    const periods = this.prices.native(market.code, readings[0].timestampMs, readings[readings.length - 1].timestampMs);
    const cost = sessionOutcomeCost(readings, base.immediateMaxPowerW, periods, (atMs) => nativeResolutionS(market, atMs), this.tariffOf(market.code, session.startMs));
    if (!cost.ok) return { ...base, unpricedReason: `no ${market.code} day-ahead price stored from ${iso(cost.missingFromMs)}` };
    return {
      ...base,
      pricedAtMs: nowMs,
      currency: market.currency,
      energyWh: Math.round(cost.energyWh * 1000) / 1000,
      actualCost: cost.actualCost,
      immediateCost: cost.immediateCost,
      immediateEndMs: Math.round(cost.immediate.endMs),
      unpricedReason: null,
    };
  }

  /** The readings that bill the session's window, as GET /api/v1/cdrs takes them; a string says why there are none. */
  private readingsInWindow(own: readonly EnergyReading[] | null, resourceId: string | null, startMs: number, endMs: number, nowMs: number): readonly EnergyReading[] | string {
    if (own !== null) {
      if (checkReadings(own, 1).length > 0) return 'the charger sent register values that cannot be priced (decreasing or out of order)';
      const inWindow = clipToWindow(own, startMs, endMs);
      return inWindow.length >= 2 ? inWindow : 'no register readings inside the session';
    }
    const stored = this.sessions.localMeterReadingsAround(resourceId!, startMs, endMs);
    const gaps = unboundedEdges(stored, startMs, endMs, this.maxEdgeGapMs);
    if (gaps.length > 0) {
      const waiting = gaps.every((g) => g.edge === 'end' && g.gapMs === null) && nowMs < endMs + this.maxEdgeGapMs;
      return waiting ? `the meter ${resourceId} has no reading after the session's end yet` : `the meter ${resourceId} was not read close enough to the session's ${gaps.map((g) => g.edge).join(' and ')}`;
    }
    if (stored.length > 0 && suspectReadings(this.db, resourceId!, stored[0].timestampMs, stored[stored.length - 1].timestampMs).count > 0) {
      return `the meter ${resourceId} has readings flagged clock_suspect in the session`;
    }
    const inWindow = clipToWindow(stored, startMs, endMs);
    return inWindow.length >= 2 ? inWindow : `the meter ${resourceId} has no readings inside the session`;
  }
}

/** /metrics: completed sessions' costs against charging immediately, summed from the stored outcomes on each scrape. */
export function registerOutcomeMetrics(metrics: Registry, db: Db): void {
  const outcomes = new SessionOutcomeStore(db);
  const labels = (t: OutcomeTotals) => ({ planned: String(t.planned), currency: t.currency });
  new Gauge({
    name: 'metergate_ocpp_completed_sessions',
    help: 'Completed charger sessions whose outcome is priced, by whether they ran under a plan the charger accepted',
    labelNames: ['planned', 'currency'] as const,
    registers: [metrics],
    collect() {
      this.reset();
      for (const t of outcomes.totals()) this.set(labels(t), t.sessions);
    },
  });
  new Gauge({
    name: 'metergate_ocpp_session_cost',
    help: 'Sum over completed charger sessions: what they cost (kind=actual, the CDR rule) and what charging the same energy immediately from plug-in would have cost (kind=immediate); day-ahead price excl. VAT',
    labelNames: ['planned', 'currency', 'kind'] as const,
    registers: [metrics],
    collect() {
      this.reset();
      for (const t of outcomes.totals()) {
        this.set({ ...labels(t), kind: 'actual' }, t.actualCost);
        this.set({ ...labels(t), kind: 'immediate' }, t.immediateCost);
      }
    },
  });
  new Gauge({
    name: 'metergate_ocpp_session_savings',
    help: 'Sum over completed charger sessions of (charging immediately - actual cost): what charging when it did saved; day-ahead price excl. VAT',
    labelNames: ['planned', 'currency'] as const,
    registers: [metrics],
    collect() {
      this.reset();
      for (const t of outcomes.totals()) this.set(labels(t), Math.round((t.immediateCost - t.actualCost) * 10_000) / 10_000);
    },
  });
}
