// What the OCPP 2.0.1 handlers of one connection share (provisioning.ts, authorization.ts,
// transactions.ts): the connection's tools from the 1.6 handlers (message-handlers.ts
// ChargerMessageHandlers.connection: the same unit of writes, storage wait, CallError policy
// and clock check), the charger's id tags as in force now, and its registration state.
import type { ChargerConfig } from '../../config/types.js';
import type { AppContext } from '../../context.js';
import type { ChargingServices } from '../../planning/charging-services.js';
import type { Ocpp201TransactionStore } from '../../store/ocpp201-transactions.js';
import type { ChargerState } from '../charger-client.js';
import type { SecurityEventLog } from '../security-events.js';
import type { ConnectionTools, OnCall, ReservationEvents } from '../message-handlers.js';
import { createRPCError } from '../rpc.js';

/**
 * The registration of this connection (OCPP 2.0.1 B01-B03): 'Accepted' once a boot was
 * accepted (or one was accepted before, on an earlier connection: a station that only
 * reconnects does not boot again); 'Pending' after the gateway answered its boot Pending.
 */
export interface Registration {
  status: 'Accepted' | 'Pending' | 'Unknown';
}

export interface Connection201 {
  readonly tools: ConnectionTools;
  readonly ctx: Pick<AppContext, 'config' | 'clock' | 'events' | 'logger'>;
  readonly auth: () => ChargerConfig['auth'];
  readonly st: ChargerState;
  readonly transactions: Ocpp201TransactionStore;
  readonly registration: Registration;
  /** The reservations the gateway made (reservations.ts): ended by the station's messages. */
  readonly reservations: ReservationEvents;
  /** Once a BootNotification was answered Accepted and written: what follows a boot (its plans, the local authorization list, central-system.ts). */
  readonly booted: () => void;
  /** Once a transaction's first event was answered and written: the plan of its EVSE as a TxProfile (profile-dispatcher.ts through v201/limit-client.ts), as after a 1.6 StartTransaction. */
  readonly transactionStarted: (evseId: number) => void;
  readonly securityEvents: SecurityEventLog;
  /** The planner and the charging stores (charging-needs.ts: a car's needs become its EVSE's target). */
  readonly charging: ChargingServices;
}

/**
 * `on` for every call but BootNotification: while the station's boot is Pending, it is
 * answered SecurityError (OCPP 2.0.1 B02: a station whose boot is not accepted sends nothing
 * else; the CSMS refuses what it sends anyway), nothing stored.
 */
export function registeredOnly(c: Connection201): OnCall {
  // Checked when the call arrives, before its unit is queued (a queued unit would run, and be answered, later).
  const refuse = () => {
    if (c.registration.status === 'Pending') throw createRPCError('SecurityError', 'the BootNotification of this station was answered Pending: send BootNotification again after its interval, nothing else before it is accepted');
  };
  return (action, handler, opts) => c.tools.on(action, handler, { ...opts, refuse });
}

/** A 2.0.1 integer the schema leaves unbounded (evseId, connectorId, seqNo): 0 to 2^31-1 as 1.6's bounds (schema-constraints.json). */
export function boundedId(value: number, path: string): number {
  if (!Number.isInteger(value) || value < 0 || value > 2_147_483_647) throw createRPCError('PropertyConstraintViolation', `${path} must be an integer from 0 to 2147483647`, { path });
  return value;
}
