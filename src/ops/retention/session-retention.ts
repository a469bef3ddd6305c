// Retention of sessions and charger data (docs/chargers.md "Storage"), as the recorder's
// purge is for readings: hourly and once at start, in steps of at most STEP_ROWS rows with
// the event loop free in between, only by a trusted clock (a clock stepped years ahead
// would purge everything).
// - Raw charger values (ocpp_meter_values) are needed until their session is final: they
//   go once the stop is older than sessions.late_meter_values_s (the session's readings are
//   kept in session_readings); values of no transaction after LOOSE_VALUES_KEEP_MS.
// - A settled charger session keeps only the readings its price depends on (the one next to
//   each quarter-hour boundary, pricing/reading-thinning.ts): checked against the stored
//   prices where they are there, the same price to the cent's hundredth.
// - Completed sessions (charger and operator) with their readings, and stopped charger
//   transactions with their outcome and plan, go store.sessions_retention_days after they
//   ended (and last changed); so do the security events the stations reported.
// Error policy: a failed step is logged and the purge tried again at the next run.
import type { AppContext } from '../../context.js';
import type { Module } from '../../lifecycle.js';
import { chargerSessionId } from '../../ocpp/charger-session-id.js';
import { DEFAULT_LATE_VALUES_S } from '../../ocpp/charger-sessions.js';
import { marketByCode, nativeResolutionS } from '../../prices/markets.js';
import { readingsThePriceNeeds } from '../../pricing/reading-thinning.js';
import { checkReadings, priceSession, type EnergyReading } from '../../pricing/session-cost.js';
import { clipToWindow } from '../../pricing/session-window.js';
import { PriceStore } from '../../store/prices.js';
import { SessionRetentionStore, type RetentionCutoffs } from '../../store/session-retention.js';
import { SessionStore } from '../../store/sessions.js';
import type { ClockGate } from '../../uplink/clock-gate.js';

const DAY_MS = 86_400_000;
const PURGE_EVERY_MS = 3_600_000;
const STEP_ROWS = 2_000;
/** Values of no transaction (a connector's idle readings) serve the site follower's "now" only. */
export const LOOSE_VALUES_KEEP_MS = DAY_MS;

/** The cut-offs at `nowMs` for the configured retention. */
export function retentionCutoffs(config: AppContext['config'], nowMs: number): RetentionCutoffs {
  return {
    settledStopBeforeMs: nowMs - (config.sessions?.late_meter_values_s ?? DEFAULT_LATE_VALUES_S) * 1000,
    looseValuesBeforeMs: nowMs - LOOSE_VALUES_KEEP_MS,
    endedBeforeMs: nowMs - config.store.sessions_retention_days * DAY_MS,
  };
}

export interface PurgeCounts {
  /** Session readings dropped from settled charger sessions (their price does not depend on them). */
  thinnedReadings: number;
  settledValues: number;
  looseValues: number;
  sessions: number;
  transactions: number;
  /** Security events the stations reported (store/security-events.ts), kept as long as sessions. */
  securityEvents: number;
}

export class SessionRetention implements Module {
  readonly name = 'session-retention';
  private timer: NodeJS.Timeout | null = null;
  /** True once stopped: a running purge ends after its current step. */
  private stopped = false;
  private purging: Promise<PurgeCounts> | null = null;
  private store?: SessionRetentionStore;
  private sessions?: SessionStore;
  private prices?: PriceStore;

  constructor(
    private readonly ctx: AppContext,
    private readonly clockGate: ClockGate,
  ) {}

  async start(): Promise<void> {
    void this.purge();
    this.timer = setInterval(() => void this.purge(), PURGE_EVERY_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.purging;
  }

  /** One purge at a time; resolves to what went. */
  purge(): Promise<PurgeCounts> {
    this.purging ??= this.purgeInSteps().finally(() => {
      this.purging = null;
    });
    return this.purging;
  }

  /** Thins up to `limit` settled charger sessions: [sessions thinned, readings dropped]. */
  private thinSettled(store: SessionRetentionStore, cutoffs: RetentionCutoffs, limit: number): [number, number] {
    const sessions = (this.sessions ??= new SessionStore(this.ctx.db));
    const prices = (this.prices ??= new PriceStore(this.ctx.db));
    return store.transaction(() => {
      const settled = store.unthinned(cutoffs, limit);
      let dropped = 0;
      for (const tx of settled) {
        const id = chargerSessionId(tx.chargePointId, tx.transactionId);
        const session = sessions.get(id, true);
        if (session?.readings && session.resourceId === null && session.endMs !== null && checkReadings(session.readings, 1).length === 0) {
          const kept = readingsThePriceNeeds(session.readings, session.startMs, session.endMs);
          if (kept.length < session.readings.length && this.samePrice(prices, session.marketArea, session.readings, kept, session.startMs, session.endMs)) {
            const keep = new Set(kept.map((r) => r.timestampMs));
            for (const r of session.readings) if (!keep.has(r.timestampMs) && sessions.deleteReading(id, r.timestampMs)) dropped++;
          }
        }
        store.markThinned(tx.transactionId);
      }
      return [settled.length, dropped];
    });
  }

  /** The thinned readings price as the whole list on the stored prices (true when there are none to check with: the rule is exact). */
  private samePrice(prices: PriceStore, marketArea: string, all: readonly EnergyReading[], kept: readonly EnergyReading[], startMs: number, endMs: number): boolean {
    const market = marketByCode(marketArea);
    if (!market) return false;
    const price = (readings: readonly EnergyReading[]) => {
      const clipped = clipToWindow(readings, startMs, endMs);
      if (clipped.length < 2) return null;
      const result = priceSession(clipped, prices.native(market.code, clipped[0].timestampMs, clipped[clipped.length - 1].timestampMs), (at) => nativeResolutionS(market, at));
      return result.ok ? result.totalCostExclVat : null;
    };
    const before = price(all);
    return before === null || before === price(kept);
  }

  private async purgeInSteps(): Promise<PurgeCounts> {
    const counts: PurgeCounts = { thinnedReadings: 0, settledValues: 0, looseValues: 0, sessions: 0, transactions: 0, securityEvents: 0 };
    const now = this.clockGate.trustedNow();
    if (now === null) return counts;
    const cutoffs = retentionCutoffs(this.ctx.config, now);
    // Each step: [rows or sessions done (0: nothing left), what counts].
    const one = (n: number): [number, number] => [n, n];
    try {
      // Inside the try: preparing the statements reads the schema, which a locked or broken
      // database can refuse; the purge is then tried again at the next run, as a failed step is.
      const store = (this.store ??= new SessionRetentionStore(this.ctx.db));
      const kinds: Array<[keyof PurgeCounts, (limit: number) => [number, number]]> = [
        ['thinnedReadings', (l) => this.thinSettled(store, cutoffs, Math.ceil(l / 100))],
        ['settledValues', (l) => one(store.purgeSettledValues(cutoffs, l))],
        ['looseValues', (l) => one(store.purgeLooseValues(cutoffs, l))],
        ['sessions', (l) => one(store.purgeEndedSessions(cutoffs, Math.ceil(l / 100)))],
        ['transactions', (l) => one(store.purgeEndedTransactions(cutoffs, Math.ceil(l / 100)))],
        ['securityEvents', (l) => one(store.purgeSecurityEvents(cutoffs, l))],
      ];
      for (const [kind, step] of kinds) {
        while (!this.stopped) {
          const [done, n] = step(STEP_ROWS);
          counts[kind] += n;
          if (done === 0) break;
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
    } catch (err) {
      this.ctx.logger.warn({ err, purged: counts }, 'sessions and charger data purge failed; tried again at the next run');
    }
    if (Object.values(counts).some((n) => n > 0)) {
      this.ctx.logger.info({ purged: counts, sessions_before: new Date(cutoffs.endedBeforeMs).toISOString() }, 'purged settled charger values and old sessions');
    }
    return counts;
  }
}
