// What cars and connectors draw, for the planner, the plan follower and the fuse
// controller: the stored current and power values (store/draw-values.ts) read as
// draw-values.ts reads them.
import type { DrawValueStore } from '../store/draw-values.js';
import type { DrawSample } from './car-draw.js';
import { connectorDrawOf, drawSamples } from './draw-values.js';
import type { ConnectorDraw } from './site-load.js';

export class ConnectorDraws {
  constructor(private readonly values: DrawValueStore) {}

  /** What the transaction drew at each instant from fromMs to toMs (draw-values.ts drawSamples). */
  samples(transactionId: number, fromMs: number, toMs: number): DrawSample[] {
    return drawSamples(this.values.valuesBetween(transactionId, fromMs, toMs));
  }

  /** Current per phase the connector draws now, or null without an open transaction or values (draw-values.ts connectorDrawOf). */
  latest(chargePointId: string, connectorId: number, phases: number, voltageV: number): ConnectorDraw | null {
    return connectorDrawOf(this.values.newestValues(chargePointId, connectorId), phases, voltageV);
  }

  /** Every connector with an open transaction (a car plugged in), with its newest one. */
  openConnectors(): Array<{ chargePointId: string; connectorId: number; transactionId: number }> {
    return this.values.openConnectors();
  }

  /** The connector's open transaction (a car plugged in), or null. */
  openTransactionId(chargePointId: string, connectorId: number): number | null {
    return this.values.openTransactionId(chargePointId, connectorId);
  }
}
