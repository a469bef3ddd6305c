// Outcomes priced after a price update (ocpp/session-outcomes.ts priceOutstanding) on a real
// SQLite store, with REAL NL day-ahead prices (../shared/data): outcomes that can never be
// priced (sessions of 2020, whose prices the gateway will never have) must not stop a later
// one from being stored priced once its prices arrive, however many there are.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/types.js';
import { ChargerSessions } from '../../src/ocpp/charger-sessions.js';
import { SessionOutcomeRecorder } from '../../src/ocpp/session-outcomes.js';
import { openDatabase, type Db } from '../../src/store/db.js';
import { loadNl2025Prices } from '../helpers/real-prices.js';

const config: Pick<Config, 'poll' | 'sessions' | 'chargers'> = { poll: { interval_ms: 10_000 } as Config['poll'], sessions: undefined, chargers: [] };
const H = 3_600_000;

describe('priceOutstanding (real SQLite, real NL prices)', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  function setup(): { db: Db; sessions: ChargerSessions; outcomes: SessionOutcomeRecorder } {
    const dir = mkdtempSync(join(tmpdir(), 'mg-outcomes-'));
    dirs.push(dir);
    const db = openDatabase(join(dir, 'metergate.db'));
    const outcomes = new SessionOutcomeRecorder(db, config);
    const sessions = new ChargerSessions(db, { marketArea: 'NL', onStopped: (tx, nowMs) => outcomes.record(tx, nowMs) });
    return { db, sessions, outcomes };
  }

  /** A charger session of 7 kWh over two hours from `startMs`, started and stopped (its outcome recorded at the stop). */
  function chargeSession(sessions: ChargerSessions, startMs: number, n: number): number {
    const { transaction } = sessions.startTransaction({ chargePointId: 'CP-1', connectorId: 1, idTag: `TAG-${n}`, meterStartWh: n * 10_000, startedAtMs: startMs, reservationId: null, idTagStatus: 'Accepted' }, startMs);
    const stoppedAtMs = startMs + 2 * H;
    expect(sessions.stopTransaction({ chargePointId: 'CP-1', transactionId: transaction.transactionId, meterStopWh: n * 10_000 + 7_000, stoppedAtMs, reason: null, idTag: null }, [], stoppedAtMs)).toBe('stopped');
    return transaction.transactionId;
  }

  it('stores a later outcome priced although more than a page of earlier ones can never be', () => {
    const { db, sessions, outcomes } = setup();
    const old = Date.parse('2020-03-02T10:00:00Z');
    // 1,200 sessions of 2020: no prices then, and none will come.
    db.transaction(() => {
      for (let i = 0; i < 1_200; i++) chargeSession(sessions, old + i * 3 * H, i);
    })();
    // Then one of 2025-05-11, stopped before its day's prices were stored.
    const start = Date.parse('2025-05-11T10:00:00Z');
    const late = chargeSession(sessions, start, 2_000);
    const unpriced = () => (db.prepare('SELECT count(*) AS n FROM ocpp_session_outcomes WHERE priced_at_ms IS NULL').get() as { n: number }).n;
    expect(unpriced()).toBe(1_201);
    const tx = (id: number) => sessions.store.transaction(id);
    // The prices arrive (the real NL file): the late session can be priced, the 2020 ones still cannot.
    expect(loadNl2025Prices(db)).toBeGreaterThan(0);
    expect(outcomes.priceOutstanding(tx, start + 3 * H)).toBe(1);
    const stored = db.prepare('SELECT priced_at_ms, actual_cost, energy_wh, unpriced_reason FROM ocpp_session_outcomes WHERE transaction_id = ?').get(late) as { priced_at_ms: number | null; actual_cost: number | null; energy_wh: number | null; unpriced_reason: string | null };
    expect(stored).toMatchObject({ priced_at_ms: start + 3 * H, energy_wh: 7_000, unpriced_reason: null });
    expect(typeof stored.actual_cost).toBe('number');
    expect(unpriced()).toBe(1_200);
    // Nothing more to store at the next update; the 2020 outcomes keep their reason.
    expect(outcomes.priceOutstanding(tx, start + 4 * H)).toBe(0);
    const reasons = db.prepare('SELECT unpriced_reason FROM ocpp_session_outcomes WHERE priced_at_ms IS NULL').all() as Array<{ unpriced_reason: string }>;
    expect(reasons.filter((r) => !/^no NL day-ahead price stored from 2020-/.test(r.unpriced_reason))).toEqual([]);
  });
});
