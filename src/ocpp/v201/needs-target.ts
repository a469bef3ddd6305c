// A car's own charging needs (ISO 15118 through OCPP 2.0.1 NotifyEVChargingNeeds, use case
// K15) as the connector's charging target (docs/chargers.md "A car's own needs"). Pure: the
// needs, the connector's configuration, the market and now in; the target a client's PUT
// …/plan would store for the same departure, energy and limits out (so the plan is the
// same as for that typed target), or the NotifyEVChargingNeedsResponse that refuses them.
//
// - energy: acChargingParameters.energyAmount (Wh, required for AC), else
//   dcChargingParameters.energyAmount; departure: departureTime. What the car leaves out is
//   taken from the connector's default target (its energy, its next local departure time),
//   where one is configured; without either there is nothing to plan on prices.
// - limits: the car's evMaxCurrent and evMinCurrent are the charger fields a client could
//   type (charger.max_current_a / min_current_a), bounded by the connector's configuration
//   exactly as a client's are (planning/ceilings.ts boundLimits): a car never raises the
//   connector's maximum nor lowers its minimum, and the site limit stays the configured one.
// - phases from requestedEnergyTransfer: AC_single_phase 1, AC_three_phase 3 (never more than
//   the connector's); AC_two_phase is planned as 1 phase (a target has 1 or 3: planning 2 as
//   3 would count power the car cannot take; as 1 the car gets its energy early, never late).
//   DC: the connector's phases, and the car's most power (evMaxPower, else evMaxCurrent ×
//   evMaxVoltage) as a current per phase of the supply (W / (phases × voltage_v)).
import type { ConnectorConfig } from '../../config/types.js';
import { boundLimits, type CeilingClamp } from '../../planning/ceilings.js';
import { nextLocalTimeMs } from '../../planning/default-target.js';
import type { ChargingTarget } from '../../store/charging-targets.js';

export type EnergyTransferMode = 'DC' | 'AC_single_phase' | 'AC_two_phase' | 'AC_three_phase';

/** ChargingNeedsType of OCPP 2.0.1 (the fields read; the schema has checked them). */
export interface ChargingNeeds201 {
  readonly requestedEnergyTransfer: EnergyTransferMode;
  readonly departureTime?: string;
  readonly acChargingParameters?: { readonly energyAmount: number; readonly evMinCurrent: number; readonly evMaxCurrent: number; readonly evMaxVoltage: number };
  readonly dcChargingParameters?: { readonly evMaxCurrent: number; readonly evMaxVoltage: number; readonly energyAmount?: number; readonly evMaxPower?: number };
}

/** The statusInfo of a NotifyEVChargingNeedsResponse that is not Accepted (reasonCode at most 20 characters). */
export interface NeedsRefusal {
  readonly status: 'Rejected';
  readonly reasonCode: 'UnknownEvse' | 'MissingParam' | 'ValueOutOfRange';
  readonly additionalInfo: string;
}

export type NeedsTarget =
  | { readonly kind: 'target'; readonly target: ChargingTarget; readonly clamps: readonly CeilingClamp[]; readonly filledFromDefault: readonly ('departure' | 'energy')[] }
  | { readonly kind: 'refused'; readonly refusal: NeedsRefusal };

export interface NeedsInput {
  readonly chargePointId: string;
  readonly evseId: number;
  readonly needs: ChargingNeeds201;
  /** The EVSE's configured connector (2.0.1's EVSE is the configured connector); null when not configured. */
  readonly connector: ConnectorConfig | null;
  /** The configured connector's place in the config, for what the ceilings lowered (chargers[i].connectors[j]). */
  readonly setting: string;
  /** site.limit_a as configured (null: none): a car's target follows it at each plan, as a client's without one. */
  readonly siteLimitA: number | null;
  readonly market: { readonly code: string; readonly timeZone: string };
  readonly nowMs: number;
  /** How far ahead a departure may be (the plan route's bound: prices and forecasts reach no further). */
  readonly maxAheadMs: number;
}

const refused = (reasonCode: NeedsRefusal['reasonCode'], additionalInfo: string): NeedsTarget => ({ kind: 'refused', refusal: { status: 'Rejected', reasonCode, additionalInfo: additionalInfo.slice(0, 512) } });

/** Tenths of an ampere, rounded down: a current derived from power never above what the car takes. */
const floorTenth = (a: number) => Math.floor(a * 10 + 1e-9) / 10;

export function targetFromNeeds(input: NeedsInput): NeedsTarget {
  const { needs, connector, nowMs } = input;
  if (!connector) return refused('UnknownEvse', `EVSE ${input.evseId} of ${input.chargePointId} is not configured (chargers[].connectors): no plan is made for it`);
  const ac = needs.acChargingParameters;
  const dc = needs.dcChargingParameters;
  const filled: ('departure' | 'energy')[] = [];

  let energyWh = ac?.energyAmount ?? dc?.energyAmount;
  if (energyWh === undefined && connector.default_target) {
    energyWh = connector.default_target.energy_wh;
    filled.push('energy');
  }
  if (energyWh === undefined) return refused('MissingParam', 'no energyAmount, and the connector has no default_target to take it from: nothing to plan on prices');
  if (!(energyWh > 0)) return refused('ValueOutOfRange', `energyAmount is ${energyWh} Wh: no energy to plan`);

  let departureMs: number;
  if (needs.departureTime !== undefined) departureMs = Date.parse(needs.departureTime);
  else if (connector.default_target) {
    departureMs = nextLocalTimeMs(input.market.timeZone, nowMs, connector.default_target.departure_local_time);
    filled.push('departure');
  } else return refused('MissingParam', 'no departureTime, and the connector has no default_target to take it from: nothing to plan on prices');
  if (!Number.isFinite(departureMs)) return refused('ValueOutOfRange', 'departureTime is not a date-time');
  if (departureMs <= nowMs) return refused('ValueOutOfRange', `departureTime ${new Date(departureMs).toISOString()} is not in the future`);
  if (departureMs > nowMs + input.maxAheadMs) return refused('ValueOutOfRange', `departureTime is more than ${Math.round(input.maxAheadMs / 86_400_000)} days ahead: prices and forecasts reach no further`);

  const mode = needs.requestedEnergyTransfer;
  const phases = mode === 'AC_three_phase' ? 3 : mode === 'DC' ? connector.phases : 1;
  const requested =
    mode === 'DC'
      ? { maxCurrentA: dc ? floorTenth((dc.evMaxPower ?? dc.evMaxCurrent * dc.evMaxVoltage) / (Math.min(phases, connector.phases) * connector.voltage_v)) : undefined, phases }
      : { maxCurrentA: ac?.evMaxCurrent, minCurrentA: ac?.evMinCurrent, phases };
  const ceiling = { maxCurrentA: connector.max_current_a, minCurrentA: connector.min_current_a, phases: connector.phases, voltageV: connector.voltage_v, setting: input.setting };
  const { limits, clamps } = boundLimits(requested, ceiling, input.siteLimitA);
  if (!(limits.maxCurrentA > 0)) return refused('ValueOutOfRange', 'the car takes no current (evMaxCurrent / evMaxPower 0)');
  if (limits.minCurrentA > limits.maxCurrentA) {
    return refused('ValueOutOfRange', `the car's minimum current (${limits.minCurrentA} A) is above the most it may take here (${limits.maxCurrentA} A, the lower of its evMaxCurrent and ${input.setting}.max_current_a)`);
  }
  return {
    kind: 'target',
    target: {
      chargePointId: input.chargePointId,
      connectorId: input.evseId,
      marketArea: input.market.code,
      departureMs,
      energyWh,
      maxCurrentA: limits.maxCurrentA,
      minCurrentA: limits.minCurrentA,
      phases: limits.phases,
      voltageV: limits.voltageV,
      // As a client's target without a site limit of its own: site.limit_a as configured at each plan.
      siteLimitA: null,
      siteOtherLoadA: null,
      // The energy the car asks for is what it needs from now.
      updatedAtMs: nowMs,
      source: 'ev',
    },
    clamps,
    filledFromDefault: filled,
  };
}
