// Pure: how much energy a connector's open transaction has delivered, from its charger's
// energy register values (register-readings.ts, the register rule) — what planning counts
// against a target (docs/planning.md "Following the plan"). connector-delivery.ts reads the
// values this needs from the store.
import { registerAtWh, type Delivery } from '../planning/progress.js';
import { registerReadings, type RegisterValue } from './register-readings.js';

/** Instants read on each side of an instant asked about: a few, in case the nearest has no outlet value. */
export const INSTANTS_EACH_SIDE = 4;

export interface OpenTransaction {
  readonly transactionId: number;
  readonly startedAtMs: number;
  readonly meterStartWh: number;
}

/** The instants whose register values deliveryOf needs: from, each of `around`, and the newest. */
export function instantsNeeded(tx: OpenTransaction, sinceMs: number, around: readonly number[]): number[] {
  return [Math.max(sinceMs, tx.startedAtMs), ...around, Number.MAX_SAFE_INTEGER];
}

/**
 * The transaction's delivery since sinceMs (its start when later), from the register values
 * around instantsNeeded() (whole instants).
 */
export function deliveryOf(tx: OpenTransaction, values: readonly RegisterValue[], sinceMs: number): Delivery {
  const fromMs = Math.max(sinceMs, tx.startedAtMs);
  const readings = registerReadings({ startedAtMs: tx.startedAtMs, meterStartWh: tx.meterStartWh, stoppedAtMs: null, meterStopWh: null }, values)
    // A register value stamped before the start is another transaction's or a clock glitch.
    .filter((r) => r.timestampMs >= tx.startedAtMs)
    .map((r) => ({ atMs: r.timestampMs, wh: r.energyKwh * 1000 }));
  const newest = readings[readings.length - 1]!;
  const fromWh = registerAtWh(readings, fromMs)!;
  return { transactionId: tx.transactionId, startedAtMs: tx.startedAtMs, deliveredWh: Math.max(0, newest.wh - fromWh), measuredAtMs: newest.atMs, readings };
}
