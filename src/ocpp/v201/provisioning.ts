// OCPP 2.0.1 provisioning (Part 2: BootNotification, B01-B03) and what a station sends
// with it from its boot on (StatusNotification G01, Heartbeat G02), onto the same
// stored charger state the 1.6 handlers keep (store/ocpp.ts), so the status page, /metrics
// and doctor show a 2.0.1 station as a 1.6 charger.
// - BootNotification: recorded as a 1.6 boot (vendorName, model, serialNumber,
//   firmwareVersion). Accepted with the heartbeat interval; Pending while the store refuses
//   writes past ocpp.storage_wait_s (the boot waits in memory and the station boots again
//   after `interval`; meanwhile its other calls are refused, connection.ts; it is asked for
//   its device model report once a later boot is Accepted, device-model.ts). The gateway
//   never answers Rejected: a station it does not know is refused at the handshake already.
// - StatusNotification: 2.0.1 reports a connector of an EVSE (evseId, connectorId,
//   connectorStatus Available/Occupied/Reserved/Unavailable/Faulted). The stored connector is
//   the EVSE (what 1.6 calls a connector: one car at a time, where a transaction runs and what
//   chargers[].connectors[].connector_id names for a 2.0.1 station); its status is 2.0.1's.
import { createRPCError } from '../rpc.js';
import { boundedId, registeredOnly, type Connection201 } from './connection.js';

interface BootNotification201 {
  readonly reason: string;
  readonly chargingStation: { readonly model: string; readonly vendorName: string; readonly serialNumber?: string; readonly firmwareVersion?: string };
}

interface StatusNotification201 {
  readonly timestamp: string;
  readonly connectorStatus: 'Available' | 'Occupied' | 'Reserved' | 'Unavailable' | 'Faulted';
  readonly evseId: number;
  readonly connectorId: number;
}

/** What a station waits before booting again after Pending (the storage wait's own retry is 1 s; a charger needs longer). */
export const PENDING_RETRY_S = 30;

export function registerProvisioning(c: Connection201): void {
  const { tools, ctx, st, registration } = c;
  const { on, nowIso, checkClock, closed, log, id, sessions, store } = tools;
  const { clock } = ctx;
  const registered = registeredOnly(c);
  /** Boots answered Pending (their unit still queued): when it is written later, the station was not told Accepted. */
  const answeredPending = new WeakSet<object>();

  on(
    'BootNotification',
    (p: BootNotification201, later) => {
      const cs = p.chargingStation;
      store.recordBoot(id, { vendor: cs.vendorName, model: cs.model, serialNumber: cs.serialNumber ?? null, firmwareVersion: cs.firmwareVersion ?? null }, clock.now());
      c.transactions.recordVersion(id, '2.0.1');
      st.bootedAtMs = clock.now();
      later(() => {
        if (answeredPending.has(p)) {
          log.info({ vendor: cs.vendorName, model: cs.model }, 'BootNotification answered Pending is written now; the station stays Pending until it boots again');
          return;
        }
        registration.status = 'Accepted';
        log.info({ vendor: cs.vendorName, model: cs.model, reason: p.reason, ocpp_version: '2.0.1' }, 'charger booted');
        // After the answer: the local list (central-system.ts) and its device model report (device-model.ts), as a 1.6 charger's configuration is read after its boot.
        c.booted();
      });
      return { status: 'Accepted', currentTime: nowIso(), interval: ctx.config.ocpp.heartbeat_interval_s };
    },
    {
      whileQueued: (p) => {
        answeredPending.add(p);
        registration.status = 'Pending';
        log.warn({ retry_s: PENDING_RETRY_S }, 'BootNotification answered Pending: the store refuses writes; the station boots again after the interval');
        return { status: 'Pending', currentTime: nowIso(), interval: PENDING_RETRY_S, statusInfo: { reasonCode: 'StorageUnavailable', additionalInfo: 'the central system cannot store the boot now; boot again after interval' } };
      },
    },
  );

  registered(
    'Heartbeat',
    () => {
      store.recordHeartbeat(id, clock.now());
      return { currentTime: nowIso() };
    },
    { whileQueued: () => ({ currentTime: nowIso() }), durable: false },
  );

  registered(
    'StatusNotification',
    (p: StatusNotification201, later) => {
      const evseId = boundedId(p.evseId, 'evseId');
      boundedId(p.connectorId, 'connectorId');
      const nowMs = clock.now();
      const atMs = Date.parse(p.timestamp);
      if (!Number.isFinite(atMs)) throw createRPCError('PropertyConstraintViolation', 'timestamp is not a date-time', { path: 'timestamp' });
      checkClock(atMs, 'StatusNotification');
      const previous = store.connectorStatus(id, evseId);
      const status = p.connectorStatus;
      store.recordStatus(id, { connectorId: evseId, status, errorCode: status === 'Faulted' ? 'OtherError' : 'NoError', info: `evse ${evseId} connector ${p.connectorId}`, atMs }, nowMs);
      // Available after a reboot: what was open on the EVSE before it, the station lost (as 1.6).
      if (status === 'Available' && evseId > 0 && st.bootedAtMs) {
        closed(sessions.closeOpen(id, evseId, st.bootedAtMs, 'reboot', nowMs), 'transaction closed by the gateway: the EVSE is Available after the station rebooted, and it never sent its TransactionEvent Ended', later);
      }
      later(() => ctx.events.emit('charger.connector-status', { chargePointId: id, connectorId: evseId, status, errorCode: 'NoError', atMs, previous }));
      return {};
    },
    { whileQueued: () => ({}) },
  );
}
