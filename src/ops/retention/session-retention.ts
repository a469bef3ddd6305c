// Retention of sessions and charger data (docs/chargers.md "Storage"), as the recorder's
// purge is for readings: hourly and once at start, in steps of at most STEP_ROWS rows with
// the event loop free in between, only by a trusted clock (a clock stepped years ahead
// would purge everything).
// - Raw charger values (ocpp_meter_values) are needed until their session is final: they
//   go once the stop is older than sessions.late_meter_values_s (the session's readings are
//   kept in session_readings); values of no transaction after LOOSE_VALUES_KEEP_MS.
// - Completed sessions (charger and operator) with their readings, and stopped charger
//   transactions with their outcome and plan, go store.sessions_retention_days after they
//   ended (and last changed).
// Error policy: a failed step is logged and the purge tried again at the next run.
import type { AppContext } from '../../context.js';
import type { Module } from '../../lifecycle.js';
import { DEFAULT_LATE_VALUES_S } from '../../ocpp/charger-sessions.js';
import { SessionRetentionStore, type RetentionCutoffs } from '../../store/session-retention.js';
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
  settledValues: number;
  looseValues: number;
  sessions: number;
  transactions: number;
}

export class SessionRetention implements Module {
  readonly name = 'session-retention';
  private timer: NodeJS.Timeout | null = null;
  /** True once stopped: a running purge ends after its current step. */
  private stopped = false;
  private purging: Promise<PurgeCounts> | null = null;
  private store?: SessionRetentionStore;

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

  private async purgeInSteps(): Promise<PurgeCounts> {
    const counts: PurgeCounts = { settledValues: 0, looseValues: 0, sessions: 0, transactions: 0 };
    const now = this.clockGate.trustedNow();
    if (now === null) return counts;
    const store = (this.store ??= new SessionRetentionStore(this.ctx.db));
    const cutoffs = retentionCutoffs(this.ctx.config, now);
    const kinds: Array<[keyof PurgeCounts, (limit: number) => number]> = [
      ['settledValues', (l) => store.purgeSettledValues(cutoffs, l)],
      ['looseValues', (l) => store.purgeLooseValues(cutoffs, l)],
      ['sessions', (l) => store.purgeEndedSessions(cutoffs, Math.ceil(l / 100))],
      ['transactions', (l) => store.purgeEndedTransactions(cutoffs, Math.ceil(l / 100))],
    ];
    try {
      for (const [kind, step] of kinds) {
        while (!this.stopped) {
          const n = step(STEP_ROWS);
          counts[kind] += n;
          if (n === 0) break;
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
    } catch (err) {
      this.ctx.logger.warn({ err, purged: counts }, 'sessions and charger data purge failed; tried again at the next run');
    }
    if (counts.settledValues + counts.looseValues + counts.sessions + counts.transactions > 0) {
      this.ctx.logger.info({ purged: counts, sessions_before: new Date(cutoffs.endedBeforeMs).toISOString() }, 'purged settled charger values and old sessions');
    }
    return counts;
  }
}
