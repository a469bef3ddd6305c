// The site's other load when planning a connector, from the site meter's latest reading.
// Pure: the reading, the connector's own draw and the settings in; the current per phase
// the rest of the site draws out, with where it came from.
//
// The rule (docs/planning.md "The site meter"):
// - a reading no older than maxReadingAgeMs is fresh. Its load per phase is its per-phase
//   active power over the phase's voltage when the meter gives the power of all three phases
//   (a P1 or mode D meter: signed, so a phase feeding in counts as no load, and finer than the
//   whole amperes a DSMR 4 meter reports), else the per-phase currents when it gives them, else
//   its total active power spread evenly over the three phases (power / (3 × voltage)); power
//   fed into the grid counts as no load;
// - when the site meter measures the chargers too, the planned connector's own draw (its
//   charger's latest measured current per phase, if measured within the same age) is taken
//   off each phase. An unknown own draw is not taken off: the other load is then counted
//   too high, never too low;
// - the other load is the highest phase's (a charger draws the same current on each phase
//   it uses, and which phase a one-phase charger uses is not known), never below 0, and
//   never below what the client said (other_load_a);
// - no reading, or a stale one: the other load is assumed to be everything but the
//   charger's minimum current (limit − minimum), so the connector may draw only its minimum
//   current until the meter is heard again. The plan says so.

export interface SiteMeterReading {
  readonly resourceId: string;
  readonly sampledAtMs: number;
  /** Current per phase L1..L3, A, when the meter gives all three. */
  readonly currentsA: readonly [number, number, number] | null;
  /** Total active power, W (negative: fed into the grid), when the meter gives it. */
  readonly powerW: number | null;
  /** Active power per phase L1..L3, W (negative: fed in), when the meter gives all three (P1: active_power_l1..l3). */
  readonly phasePowersW?: readonly [number, number, number] | null;
  /** Voltage per phase L1..L3, V, when the meter gives all three. */
  readonly voltagesV?: readonly [number, number, number] | null;
}

export interface ConnectorDraw {
  readonly sampledAtMs: number;
  /** Current per phase the connector draws, A (L1..L3; a phase it does not use is 0). */
  readonly currentsA: readonly [number, number, number];
}

export interface SiteLoadSettings {
  readonly maxReadingAgeMs: number;
  readonly includesChargers: boolean;
  readonly voltageV: number;
}

export type SiteLoadState = 'measured' | 'stale' | 'no-reading';

export interface SiteLoad {
  readonly state: SiteLoadState;
  /** Current per phase the rest of the site draws, A: what the plan subtracts from the limit. */
  readonly otherLoadA: number;
  readonly resourceId: string;
  readonly sampledAtMs: number | null;
  /** The meter's load per phase (before the connector's own draw is taken off); null when stale or unread. */
  readonly meterLoadA: readonly [number, number, number] | null;
  /** The connector's own draw taken off per phase; null when none was. */
  readonly ownDrawA: readonly [number, number, number] | null;
  /** Whether the phases came from the meter's per-phase power, its currents, or its total power spread evenly. */
  readonly perPhase: 'phase-powers' | 'currents' | 'power-split' | null;
  /** Why the value is assumed, when it is. */
  readonly note: string | null;
}

export interface SiteLoadInput {
  readonly nowMs: number;
  readonly resourceId: string;
  readonly reading: SiteMeterReading | null;
  readonly ownDraw: ConnectorDraw | null;
  readonly limitA: number;
  readonly minCurrentA: number;
  /** What the client said the other load is (0 when nothing). */
  readonly clientOtherLoadA: number;
  readonly settings: SiteLoadSettings;
}

const round2 = (v: number) => Math.round(v * 100) / 100;
/** The other load to a hundredth of an ampere, rounded up: counted too high, never too low (what is below 1e-9 of a hundredth is float noise). */
const up2 = (v: number) => Math.max(0, Math.ceil(v * 100 - 1e-6) / 100);

export function siteOtherLoad(input: SiteLoadInput): SiteLoad {
  const { nowMs, reading, settings } = input;
  const client = Math.max(0, input.clientOtherLoadA);
  const assumed = (state: 'stale' | 'no-reading', note: string): SiteLoad => ({
    state,
    otherLoadA: up2(Math.max(client, input.limitA - input.minCurrentA)),
    resourceId: input.resourceId,
    sampledAtMs: reading?.sampledAtMs ?? null,
    meterLoadA: null,
    ownDrawA: null,
    perPhase: null,
    note,
  });
  const maxAgeS = settings.maxReadingAgeMs / 1000;
  if (!reading) return assumed('no-reading', `no reading from the site meter ${input.resourceId} yet: the connector is planned at its minimum current`);
  const ageMs = nowMs - reading.sampledAtMs;
  if (ageMs > settings.maxReadingAgeMs || ageMs < -settings.maxReadingAgeMs) {
    return assumed('stale', `the site meter ${input.resourceId} was last read ${Math.round(ageMs / 1000)} s ago (more than ${maxAgeS} s): the connector is planned at its minimum current`);
  }
  let meterLoadA: [number, number, number];
  let perPhase: 'phase-powers' | 'currents' | 'power-split';
  if (reading.phasePowersW) {
    const volts = reading.voltagesV;
    const amps = reading.currentsA;
    // A phase feeding in carries no load of ours. One drawing is loaded by the larger of its
    // measured current and P/V: the fuse carries the RMS current, which P/V (I·cos φ) underrates
    // for reactive or distorted loads, while P/V is finer than a DSMR meter's whole amperes.
    meterLoadA = reading.phasePowersW.map((w, i) =>
      w > 0 ? Math.max(amps ? Math.max(0, amps[i]) : 0, w / (volts && volts[i] > 0 ? volts[i] : settings.voltageV)) : 0,
    ) as [number, number, number];
    perPhase = 'phase-powers';
  } else if (reading.currentsA) {
    meterLoadA = reading.currentsA.map((a) => Math.max(0, a)) as [number, number, number];
    perPhase = 'currents';
  } else if (reading.powerW !== null) {
    const perPhaseA = Math.max(0, reading.powerW) / (3 * settings.voltageV);
    meterLoadA = [perPhaseA, perPhaseA, perPhaseA];
    perPhase = 'power-split';
  } else {
    return assumed('no-reading', `the site meter ${input.resourceId} gives neither current per phase nor total power: the connector is planned at its minimum current`);
  }
  const draw = input.ownDraw;
  const ownFresh = settings.includesChargers && draw !== null && Math.abs(nowMs - draw.sampledAtMs) <= settings.maxReadingAgeMs;
  const ownDrawA = ownFresh ? draw.currentsA : null;
  const other = Math.max(...meterLoadA.map((a, i) => a - (ownDrawA ? Math.max(0, ownDrawA[i]) : 0)));
  return {
    state: 'measured',
    otherLoadA: up2(Math.max(0, other, client)),
    resourceId: input.resourceId,
    sampledAtMs: reading.sampledAtMs,
    meterLoadA: meterLoadA.map(round2) as unknown as [number, number, number],
    ownDrawA,
    perPhase,
    note: settings.includesChargers && !ownFresh ? 'the connector\'s own draw is not known (no recent Current.Import or Power.Active.Import): not taken off the site meter\'s reading' : null,
  };
}

/** The site meter's reading from a sample's metrics (contract names: current_l1..l3, active_power_l1..l3, voltage_l1..l3, total_active_power). */
export function siteMeterReading(sample: { resourceId: string; sampledAtMs: number; metrics: ReadonlyArray<{ name: string; value: number }> }): SiteMeterReading {
  const value = (name: string) => sample.metrics.find((m) => m.name === name)?.value;
  const l1 = value('current_l1');
  const l2 = value('current_l2');
  const l3 = value('current_l3');
  const power = value('total_active_power');
  const all3 = (prefix: string): [number, number, number] | null => {
    const v = [1, 2, 3].map((i) => value(`${prefix}${i}`));
    return v.every((x) => x !== undefined) ? (v as [number, number, number]) : null;
  };
  return {
    resourceId: sample.resourceId,
    sampledAtMs: sample.sampledAtMs,
    currentsA: l1 !== undefined && l2 !== undefined && l3 !== undefined ? [l1, l2, l3] : null,
    powerW: power ?? null,
    phasePowersW: all3('active_power_l'),
    voltagesV: all3('voltage_l'),
  };
}
