// The power the grid operator's dimming (§14a EnWG) leaves the controllable devices behind
// this energy manager, and what it leaves the chargers the gateway controls. Pure; the
// numbers are data (para14a.json, BNetzA BK6-22-300 Annex 1 Ziff. 4.5; docs/grid-limits.md).
import { readFileSync } from 'node:fs';

/** A controllable device (steuerbare Verbrauchseinrichtung) behind the energy manager that the gateway does not control. */
export interface OtherControllableDevice {
  readonly kind: 'heat-pump' | 'air-conditioning' | 'storage' | 'charge-point';
  /** Its connection power (Netzanschlussleistung), kW. */
  readonly connectionPowerKw: number;
}

export interface Para14aRule {
  readonly minimumPerDeviceKw: number;
  readonly scaledAboveKw: number;
  readonly scalingFactor: number;
  /** Simultaneity factor (GZF) for n = 2, 3, …; the last one for every larger n. */
  readonly simultaneityFactors: readonly number[];
}

/** The rule's numbers as Annex 1 prints them (para14a.json, read once at load). */
export const BK6_22_300: Para14aRule = JSON.parse(readFileSync(new URL('./para14a.json', import.meta.url), 'utf8')) as Para14aRule;

/** The simultaneity factor for n devices (1 for a single device: its term is multiplied by 0). */
export function simultaneityFactor(n: number, rule: Para14aRule = BK6_22_300): number {
  if (n < 2) return 1;
  const f = rule.simultaneityFactors;
  return f[Math.min(n - 2, f.length - 1)]!;
}

/**
 * P_min,14a in W for the gateway's chargers (`chargePoints`, each a device above 4.2 kW)
 * and the other controllable devices behind the same energy manager (Annex 1 Ziff. 4.5.2,
 * heat pumps grouped into one device and air conditioning into another as Ziff. 2.4.2 says).
 * A device of 4.2 kW or less is no controllable device and does not count.
 */
export function minimumPowerW(chargePoints: number, others: readonly OtherControllableDevice[], rule: Para14aRule = BK6_22_300): number {
  const sumOf = (kind: OtherControllableDevice['kind']) => others.filter((d) => d.kind === kind).reduce((s, d) => s + d.connectionPowerKw, 0);
  const heatPumpsKw = sumOf('heat-pump');
  const coolingKw = sumOf('air-conditioning');
  const single = others.filter((d) => (d.kind === 'storage' || d.kind === 'charge-point') && d.connectionPowerKw > rule.minimumPerDeviceKw).length;
  const n = chargePoints + single + (heatPumpsKw > rule.minimumPerDeviceKw ? 1 : 0) + (coolingKw > rule.minimumPerDeviceKw ? 1 : 0);
  if (n === 0) return 0;
  const scaled = Math.max(heatPumpsKw > rule.scaledAboveKw ? rule.scalingFactor * heatPumpsKw : 0, coolingKw > rule.scaledAboveKw ? rule.scalingFactor * coolingKw : 0);
  const firstKw = scaled > 0 ? scaled : rule.minimumPerDeviceKw;
  return Math.round((firstKw + (n - 1) * simultaneityFactor(n, rule) * rule.minimumPerDeviceKw) * 1000);
}

/**
 * The current per phase the controlled chargers may draw together while dimmed: the dimmed
 * power less the fixed loads of the devices the gateway does not control (they may draw
 * their configured power at any moment), as current per phase at the connectors' voltage
 * on `phases` phases (a 3-phase site: the power spread over the three). Never below 0.
 */
export function dimmedChargerCurrentA(limitW: number, fixedLoadsW: number, voltageV: number, phases: number): number {
  const leftW = Math.max(0, limitW - Math.max(0, fixedLoadsW));
  return Math.floor((leftW / (voltageV * Math.max(1, phases))) * 100 + 1e-9) / 100;
}

/** A contact pattern (each configured input active or not) and the limit it sets. */
export interface ContactPattern {
  readonly contacts: readonly boolean[];
  /** 'minimum': P_min,14a; 'none': not dimmed; a number: that many W. */
  readonly limit: 'minimum' | 'none' | number;
}

/** The limit the inputs read now ask for: the first pattern that matches; none matches: the most restrictive one (a pattern the config does not know is not "no limit"). */
export function patternLimit(contacts: readonly boolean[], patterns: readonly ContactPattern[]): ContactPattern['limit'] {
  const match = patterns.find((p) => p.contacts.length === contacts.length && p.contacts.every((c, i) => c === contacts[i]));
  if (match) return match.limit;
  return patterns.some((p) => p.limit === 'minimum') ? 'minimum' : 'none';
}
