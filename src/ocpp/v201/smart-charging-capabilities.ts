// Pure: what a 2.0.1 station's device model (NotifyReport, stored by device-model.ts) says of
// the profiles it takes, as the strategy choice takes a 1.6 charger's GetConfiguration keys
// (charging-strategy.ts ChargerCapabilities), so its plans are cut to what it takes before it
// has to refuse them (OCPP 2.0.1 Part 2 Appendix, SmartChargingCtrlr):
//   Enabled false            -> no smart charging (the plans go by remote-start-stop)
//   RateUnit  "A", "W", "A,W" -> ChargingScheduleAllowedChargingRateUnit (A unless W only)
//   PeriodsPerSchedule        -> ChargingScheduleMaxPeriods
//   ProfileStackLevel         -> ChargeProfileMaxStackLevel
// A variable never reported says nothing (null), as an unknown 1.6 key does.
import type { ChargerCapabilities } from '../charging-strategy.js';

export const SMART_CHARGING_CTRLR = 'SmartChargingCtrlr';

const integer = (v: string | null | undefined): number | null => {
  const n = v === null || v === undefined ? NaN : Number(v.trim());
  return Number.isInteger(n) && n >= 0 ? n : null;
};

/** `actual(component, variable)`: the station-wide variable's Actual value as reported (undefined/null: none). */
export function capabilitiesFromDeviceModel(actual: (component: string, variable: string) => string | null | undefined): ChargerCapabilities {
  const enabled = actual(SMART_CHARGING_CTRLR, 'Enabled');
  return {
    supportedFeatureProfiles: enabled?.trim().toLowerCase() === 'false' ? ['Core'] : null,
    maxStackLevel: integer(actual(SMART_CHARGING_CTRLR, 'ProfileStackLevel')),
    allowedChargingRateUnit: actual(SMART_CHARGING_CTRLR, 'RateUnit') ?? null,
    maxPeriods: integer(actual(SMART_CHARGING_CTRLR, 'PeriodsPerSchedule')),
  };
}
