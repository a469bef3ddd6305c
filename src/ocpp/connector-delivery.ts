// What a connector's open transaction has delivered (planning/progress.ts DeliveryReader):
// the register values the rule needs, read from the store (store/connector-registers.ts),
// with the register rule applied (delivery.ts). For the planner and the plan follower.
import type { Delivery, DeliveryReader } from '../planning/progress.js';
import type { ConnectorRegisterStore } from '../store/connector-registers.js';
import { deliveryOf, instantsNeeded, INSTANTS_EACH_SIDE } from './delivery.js';
import { ENERGY_REGISTER } from './register-readings.js';

export class ConnectorDelivery implements DeliveryReader {
  constructor(private readonly registers: ConnectorRegisterStore) {}

  delivery(chargePointId: string, connectorId: number, sinceMs: number, around: readonly number[] = []): Delivery | null {
    const tx = this.registers.openTransaction(chargePointId, connectorId);
    if (!tx) return null;
    const values = this.registers.valuesAround(tx.transactionId, ENERGY_REGISTER, instantsNeeded(tx, sinceMs, around), INSTANTS_EACH_SIDE);
    return deliveryOf(tx, values, sinceMs);
  }
}
