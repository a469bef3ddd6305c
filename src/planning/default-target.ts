// A connector's default target (docs/chargers.md "Default targets"): when a transaction
// starts on a connector with a configured default and no target set by a client in force,
// the car is planned to have the configured energy by the next configured local time.
// Pure: the connector's settings, the market's time zone and the start in, a target out.
import type { ConnectorConfig } from '../config/types.js';
import type { ChargingTarget } from '../store/charging-targets.js';
import { localDate, offsetMs, wallToUtc } from '../prices/timezone.js';

const HOUR_MS = 3_600_000;

/**
 * The first instant after afterMs at which the local clock of timeZone shows HH:MM. On a
 * spring-forward day a time in the gap is taken an hour later (02:30 → 03:30); on an
 * autumn day with the time twice, the earlier one.
 */
export function nextLocalTimeMs(timeZone: string, afterMs: number, hhmm: string): number {
  const m = /^([01][0-9]|2[0-3]):([0-5][0-9])$/.exec(hhmm);
  if (!m) throw new RangeError(`not a local time (HH:MM): ${hhmm}`);
  const [hours, minutes] = [Number(m[1]), Number(m[2])];
  const date = localDate(timeZone, afterMs);
  for (let day = 0; day < 3; day++) {
    const [y, mo, d] = date.split('-').map(Number) as [number, number, number];
    const wallMs = Date.UTC(y, mo - 1, d + day, hours, minutes);
    const candidates = wallToUtc(timeZone, wallMs);
    // In a gap: the wall time read with the offset before the gap, which the clock shows an hour later.
    const atMs = candidates.length > 0 ? candidates[0]! : wallMs - offsetMs(timeZone, wallMs - 12 * HOUR_MS);
    if (atMs > afterMs) return atMs;
  }
  // Unreachable: one of three consecutive days has the time after afterMs.
  throw new RangeError(`no ${hhmm} after ${new Date(afterMs).toISOString()} in ${timeZone}`);
}

/** The connector's default target for a transaction started at startedAtMs, or null when it has none. */
export function defaultTarget(
  chargePointId: string,
  connector: ConnectorConfig,
  market: { readonly code: string; readonly timeZone: string },
  startedAtMs: number,
): ChargingTarget | null {
  const d = connector.default_target;
  if (!d) return null;
  return {
    chargePointId,
    connectorId: connector.connector_id,
    marketArea: market.code,
    departureMs: nextLocalTimeMs(market.timeZone, startedAtMs, d.departure_local_time),
    energyWh: d.energy_wh,
    maxCurrentA: connector.max_current_a,
    minCurrentA: connector.min_current_a,
    phases: connector.phases,
    voltageV: connector.voltage_v,
    siteLimitA: null,
    siteOtherLoadA: null,
    // The energy needed counts from the transaction's start.
    updatedAtMs: startedAtMs,
    source: 'default',
  };
}
