// Whether the schedule a car says it will follow (NotifyEVChargingSchedule, K15.FR.11) stays
// within what its connector may give: every period's limit at most the connector's
// max_current_a (A), or its power at that current (W: max_current_a × phases × voltage_v, the
// period's numberPhases when it gives fewer). The station checks the car's schedule against
// the profile it was sent (K15.FR.07); the gateway checks the configured ceiling, which no
// profile it sends exceeds. Pure.
import type { ConnectorConfig } from '../../config/types.js';

export interface EvChargingSchedule201 {
  readonly chargingRateUnit: 'A' | 'W';
  readonly chargingSchedulePeriod: ReadonlyArray<{ readonly startPeriod: number; readonly limit: number; readonly numberPhases?: number }>;
}

/** null when within; else which period is above what and why. */
export function scheduleAboveCeiling(schedule: EvChargingSchedule201, connector: Pick<ConnectorConfig, 'max_current_a' | 'phases' | 'voltage_v'>): string | null {
  for (const p of schedule.chargingSchedulePeriod) {
    const phases = Math.min(connector.phases, p.numberPhases ?? 3);
    const ceiling = schedule.chargingRateUnit === 'A' ? connector.max_current_a : connector.max_current_a * phases * connector.voltage_v;
    // The schema allows one decimal: a ceiling of 16 A is 16.0, never exceeded by rounding.
    if (p.limit > ceiling + 1e-9) return `the period at ${p.startPeriod} s asks ${p.limit} ${schedule.chargingRateUnit}, above the connector's ${ceiling} ${schedule.chargingRateUnit}`;
  }
  return null;
}
