// The calls an OCPP 2.0.1 charging station sends (docs/chargers.md "OCPP 2.0.1"), one file
// per functional block: provisioning (B, its device model in device-model.ts), authorization (C), transactions (E), reservations (H),
// security (A: security events, SignCertificate refused), data transfer (P), ISO 15118
// charging needs (K15, charging-needs.ts), smart charging (K: external limits, reported
// profiles, smart-charging.ts; the gateway's profiles go out by limit-client.ts), and the
// routine notifications a station sends, acknowledged (notifications.ts). Each is
// handled onto the same store as its 1.6 counterpart, through the same unit of writes
// (message-handlers.ts ChargerMessageHandlers.connection). An action not listed here is
// answered NotImplemented by ocpp-rpc (after the 2.0.1 schema check).
import type { ChargerConfig } from '../../config/types.js';
import type { AppContext } from '../../context.js';
import type { ChargingServices } from '../../planning/charging-services.js';
import type { Ocpp201TransactionStore } from '../../store/ocpp201-transactions.js';
import type { ChargerClient, ChargerState } from '../charger-client.js';
import type { ChargerMessageHandlers, ReservationEvents } from '../message-handlers.js';
import type { SecurityEventLog } from '../security-events.js';
import { registerAuthorization } from './authorization.js';
import { registerDataTransfer } from './data-transfer.js';
import { registerSecurity } from './security.js';
import type { DeviceModels } from './device-model.js';
import { registerChargingNeeds } from './charging-needs.js';
import type { Connection201 } from './connection.js';
import { registerNotifications } from './notifications.js';
import { registerProvisioning } from './provisioning.js';
import { registerReservations } from './reservations.js';
import { registerSmartCharging, type SmartCharging201 } from './smart-charging.js';
import { registerTransactions } from './transactions.js';

export function attach201(
  base: ChargerMessageHandlers,
  ctx: Pick<AppContext, 'config' | 'clock' | 'events' | 'logger'>,
  transactions: Ocpp201TransactionStore,
  client: ChargerClient,
  auth: () => ChargerConfig['auth'],
  st: ChargerState,
  reservations: ReservationEvents,
  booted: () => void,
  securityEvents: SecurityEventLog,
  transactionStarted: (evseId: number) => void,
  deviceModels: DeviceModels,
  charging: ChargingServices,
  smartCharging: SmartCharging201,
): void {
  const tools = base.connection(client, st);
  // A station accepted before (on an earlier connection, or before a gateway restart) does not boot again to reconnect.
  const c: Connection201 = { tools, ctx, auth, st, transactions, reservations, booted, transactionStarted, securityEvents, registration: { status: tools.store.bootedAtMs(client.identity) === null ? 'Unknown' : 'Accepted' }, charging };
  // One that reconnects accepted and never reported its device model is asked for it now.
  if (c.registration.status === 'Accepted') deviceModels.afterAccepted(client.identity, 'reconnect');
  registerProvisioning(c);
  deviceModels.register(c);
  registerAuthorization(c);
  registerTransactions(c);
  registerNotifications(c);
  registerReservations(c);
  registerSecurity(c);
  registerDataTransfer(c);
  registerChargingNeeds(c);
  registerSmartCharging(c, smartCharging);
}
