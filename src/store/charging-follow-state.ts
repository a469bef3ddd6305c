// Following a connector's plan: what is remembered across restarts (migration 140). One row
// per connector; each writer sets only its own columns.
import type { Db } from './db.js';

export interface FollowState {
  /** When the plan follower last planned the rest again (behind-plan, charger-available). */
  readonly replannedAtMs: number | null;
  /** When the site's load last changed the plan, and the highest current per phase that plan allowed. */
  readonly siteChangedAtMs: number | null;
  readonly siteCapA: number | null;
  /** The car's observed maximum draw, learnt in transaction observedTransactionId. */
  readonly observedTransactionId: number | null;
  readonly observedMaxCurrentA: number | null;
  readonly observedPhases: number | null;
  readonly observedAtMs: number | null;
}

interface Row {
  replanned_at_ms: number | null;
  site_changed_at_ms: number | null;
  site_cap_a: number | null;
  observed_transaction_id: number | null;
  observed_max_current_a: number | null;
  observed_phases: number | null;
  observed_at_ms: number | null;
}

export class FollowStateStore {
  private readonly stmts;

  constructor(db: Db) {
    const upsert = (columns: string[]) =>
      db.prepare(
        `INSERT INTO charging_follow_state (charge_point_id, connector_id, ${columns.join(', ')}) VALUES (@cp, @connector, ${columns.map((c) => `@${c}`).join(', ')})
         ON CONFLICT (charge_point_id, connector_id) DO UPDATE SET ${columns.map((c) => `${c} = excluded.${c}`).join(', ')}`,
      );
    this.stmts = {
      get: db.prepare<[string, number], Row>('SELECT * FROM charging_follow_state WHERE charge_point_id = ? AND connector_id = ?'),
      replanned: upsert(['replanned_at_ms']),
      site: upsert(['site_changed_at_ms', 'site_cap_a']),
      observed: upsert(['observed_transaction_id', 'observed_max_current_a', 'observed_phases', 'observed_at_ms']),
    };
  }

  get(chargePointId: string, connectorId: number): FollowState {
    const r = this.stmts.get.get(chargePointId, connectorId);
    return {
      replannedAtMs: r?.replanned_at_ms ?? null,
      siteChangedAtMs: r?.site_changed_at_ms ?? null,
      siteCapA: r?.site_cap_a ?? null,
      observedTransactionId: r?.observed_transaction_id ?? null,
      observedMaxCurrentA: r?.observed_max_current_a ?? null,
      observedPhases: r?.observed_phases ?? null,
      observedAtMs: r?.observed_at_ms ?? null,
    };
  }

  setReplanned(chargePointId: string, connectorId: number, atMs: number | null): void {
    this.stmts.replanned.run({ cp: chargePointId, connector: connectorId, replanned_at_ms: atMs });
  }

  /** capA null: no cap of the site's in force (a car paused by its plan, not for the site). */
  setSiteChange(chargePointId: string, connectorId: number, atMs: number, capA: number | null): void {
    this.stmts.site.run({ cp: chargePointId, connector: connectorId, site_changed_at_ms: atMs, site_cap_a: capA });
  }

  setObserved(chargePointId: string, connectorId: number, o: { transactionId: number; maxCurrentA: number; phases: number; atMs: number }): void {
    this.stmts.observed.run({ cp: chargePointId, connector: connectorId, observed_transaction_id: o.transactionId, observed_max_current_a: o.maxCurrentA, observed_phases: o.phases, observed_at_ms: o.atMs });
  }
}
