// The current a connector may draw per phase: the charger's own maximum, lowered by the
// site's limit per phase minus the other load the site meter sees (where one is known).
// Below the charger's minimum current (IEC 61851 chargers cannot signal less than 6 A) it
// cannot charge at all. Pure.

export interface ChargerLimits {
  /** The charger's (or the car's) maximum current per phase. */
  readonly maxCurrentA: number;
  /** The lowest current the charger can signal; below it the connector must stop. */
  readonly minCurrentA: number;
  /** Phases used while charging (1 or 3). */
  readonly phases: number;
  /** Phase-to-neutral voltage used to turn current into power. */
  readonly voltageV: number;
}

export interface SiteLimit {
  /** The site connection's limit per phase (the main fuse). */
  readonly limitA: number;
  /** Current per phase the rest of the site draws, from the site meter; absent = unknown (0 assumed). */
  readonly otherLoadA?: number;
}

/** Current per phase the connector may use; 0 when the limits leave less than its minimum. */
export function allowedCurrentA(charger: ChargerLimits, site?: SiteLimit): number {
  const siteHeadroomA = site ? site.limitA - Math.max(0, site.otherLoadA ?? 0) : Infinity;
  const currentA = Math.min(charger.maxCurrentA, siteHeadroomA);
  return currentA >= charger.minCurrentA && currentA > 0 ? currentA : 0;
}

/** Power in W at a current per phase. */
export function powerAtW(charger: ChargerLimits, currentA: number): number {
  return currentA * charger.voltageV * charger.phases;
}

/** A charger whose limits nobody gave: 16 A on 3 phases at 230 V, 6 A minimum (IEC 61851). */
export const DEFAULT_CHARGER_LIMITS: ChargerLimits = { maxCurrentA: 16, minCurrentA: 6, phases: 3, voltageV: 230 };
