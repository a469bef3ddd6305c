// What an OCPP 2.0.1 station tells the CSMS about the limits on its charging (Part 2 block K;
// the gateway's own profiles go out through limit-client.ts):
// - NotifyChargingLimit (K12): a limit set by another system (its EMS, the grid operator, a
//   local controller: chargingLimitSource EMS/Other/SO/CSO), on an EVSE or (no evseId) the
//   whole station, with or without a schedule. Stored (migration 270) and taken by the planner
//   as one more ceiling of the connector's wanted limit (planning/external-limit.ts; only for
//   the station or a configured EVSE, one per EVSE and source, so its rows stay bounded): the
//   connector's plan is made again at once and sent, and the fuse controller shares the site
//   with it at that limit, not at its configured maximum.
// - ClearedChargingLimit (K13): the source's limit is gone; the plan is made again.
// - ReportChargingProfiles (K09): the profiles the station holds, in answer to a
//   GetChargingProfiles: stored as sent, per request id.
// Each answered `{}` (their answers have no fields), also while the store refuses writes (the
// unit waits and is written later, as a StatusNotification's).
import type { ExternalLimitRecord, Ocpp201ChargingLimitStore } from '../../store/ocpp201-charging-limits.js';
import { boundedId, registeredOnly, type Connection201 } from './connection.js';
import type { ExternalChargingLimits } from './external-limits.js';

/** What the handlers share with the central system. */
export interface SmartCharging201 {
  readonly store: Ocpp201ChargingLimitStore;
  readonly limits: ExternalChargingLimits;
  /** A station's external limit changed on an EVSE (null: every EVSE of it): its plans are made again. */
  limitChanged(chargePointId: string, evseId: number | null): void;
}

interface NotifyChargingLimit201 {
  readonly evseId?: number;
  readonly chargingLimit: { readonly chargingLimitSource: string; readonly isGridCritical?: boolean };
  readonly chargingSchedule?: readonly unknown[];
}

export function registerSmartCharging(c: Connection201, sc: SmartCharging201): void {
  const { log, id } = c.tools;
  const { clock } = c.ctx;
  const on = registeredOnly(c);
  const configuredEvse = (evseId: number) => c.ctx.config.chargers.find((k) => k.id === id)?.connectors?.some((k) => k.connector_id === evseId) === true;

  on(
    'NotifyChargingLimit',
    (p: NotifyChargingLimit201, later) => {
      const evseId = p.evseId === undefined ? 0 : boundedId(p.evseId, 'evseId');
      // Kept only for the station or a configured EVSE: a station naming any number of EVSEs cannot grow the table (or the planner's view) without bound.
      if (evseId !== 0 && !configuredEvse(evseId)) {
        log.warn({ evse_id: evseId, source: p.chargingLimit.chargingLimitSource }, 'external charging limit on an EVSE that is not configured (chargers[].connectors): answered, not kept');
        return {};
      }
      const record: ExternalLimitRecord = { chargePointId: id, evseId, source: p.chargingLimit.chargingLimitSource, gridCritical: p.chargingLimit.isGridCritical ?? null, schedules: p.chargingSchedule ?? null, receivedAtMs: clock.now() };
      sc.store.putExternal(record);
      later(() => {
        sc.limits.put(record);
        log.info({ evse_id: evseId, source: record.source, grid_critical: record.gridCritical, schedules: record.schedules?.length ?? 0 }, 'external charging limit reported by the station: its plans are made within it');
        sc.limitChanged(id, evseId === 0 ? null : evseId);
      });
      return {};
    },
    { whileQueued: () => ({}) },
  );

  on(
    'ClearedChargingLimit',
    (p: { chargingLimitSource: string; evseId?: number }, later) => {
      const evseId = p.evseId === undefined ? null : boundedId(p.evseId, 'evseId');
      const removed = sc.store.clearExternal(id, p.chargingLimitSource, evseId);
      later(() => {
        sc.limits.clear(id, p.chargingLimitSource, evseId);
        log.info({ evse_id: evseId, source: p.chargingLimitSource, removed }, 'external charging limit cleared by the station');
        sc.limitChanged(id, evseId === 0 ? null : evseId);
      });
      return {};
    },
    { whileQueued: () => ({}) },
  );

  on(
    'ReportChargingProfiles',
    (p: { requestId: number; chargingLimitSource: string; evseId: number; chargingProfile: readonly unknown[]; tbc?: boolean }) => {
      const evseId = boundedId(p.evseId, 'evseId');
      sc.store.putReport(id, { requestId: p.requestId, evseId, source: p.chargingLimitSource, profiles: p.chargingProfile, receivedAtMs: clock.now() });
      log.info({ request_id: p.requestId, evse_id: evseId, source: p.chargingLimitSource, profiles: p.chargingProfile.length, tbc: p.tbc === true }, 'charging profiles reported by the station');
      return {};
    },
    { whileQueued: () => ({}) },
  );
}
