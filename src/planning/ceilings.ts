// Configured limits are ceilings no client can raise (docs/chargers.md "Ceilings"). Pure:
// the config's connectors and site limit in; for a target (a client's request, or one
// stored before the config changed) the limits a plan may use and which of them were
// lowered, out.
//
// The rule: a connector that is not listed under its charger's `connectors` has no plan
// at all. For one that is, a limit the client leaves out is the configured one; one it
// gives may be lower, never higher: max_current_a, phases and voltage_v (a W schedule is
// current × phases × voltage) are each the lower of the two, min_current_a the higher (the
// charger cannot signal less), and site.limit_a the lower of the client's and the
// configured one when one is configured. The measured headroom of a site meter (site-load.ts)
// and the site's share (site-share.ts) lower it further when planning.
import type { ChargerConfig } from '../config/types.js';
import type { ChargerLimits } from './limits.js';

/** A connector's configured limits and where in the config they are (for messages). */
export interface ConnectorCeiling extends ChargerLimits {
  /** The config path of the connector's entry, e.g. chargers[0].connectors[1]. */
  readonly setting: string;
  /** Whether the connector has a default_target: a transaction there gets a plan of its own, never a charge-now one (charge-now.ts). */
  readonly hasDefaultTarget?: boolean;
}

export interface Ceilings {
  /** site.limit_a: the connection's limit per phase; null when not configured. */
  readonly siteLimitA: number | null;
  /** The connector's configured limits; null when the charger or the connector is not configured. */
  connector(chargePointId: string, connectorId: number): ConnectorCeiling | null;
  /** Whether the charge point is configured (chargers[].id), with or without connectors. */
  chargePointConfigured(chargePointId: string): boolean;
}

/** The limits a client may set, as the API names them. */
export type CeilingField = 'charger.max_current_a' | 'charger.min_current_a' | 'charger.phases' | 'charger.voltage_v' | 'site.limit_a';

/** A limit the client asked for that the configuration did not allow. */
export interface CeilingClamp {
  readonly field: CeilingField;
  readonly requested: number;
  /** What the plan uses instead. */
  readonly applied: number;
  /** The config setting that bounds it, e.g. chargers[0].connectors[0].max_current_a. */
  readonly setting: string;
}

/** What a target asks for; a limit left out is the configured one. */
export interface RequestedLimits {
  readonly maxCurrentA?: number;
  readonly minCurrentA?: number;
  readonly phases?: number;
  readonly voltageV?: number;
  readonly siteLimitA?: number | null;
}

export interface BoundedLimits extends ChargerLimits {
  /** The site limit the plan uses: the lower of the client's and the configured one; null when neither gives one. */
  readonly siteLimitA: number | null;
}

export function configuredCeilings(config: { readonly chargers: readonly Pick<ChargerConfig, 'id' | 'connectors'>[]; readonly site: { readonly limit_a?: number } }): Ceilings {
  const connectors = new Map<string, ConnectorCeiling>();
  config.chargers.forEach((charger, i) =>
    (charger.connectors ?? []).forEach((c, j) => {
      connectors.set(keyOf(charger.id, c.connector_id), {
        maxCurrentA: c.max_current_a,
        minCurrentA: c.min_current_a,
        phases: c.phases,
        voltageV: c.voltage_v,
        setting: `chargers[${i}].connectors[${j}]`,
        hasDefaultTarget: c.default_target !== undefined,
      });
    }),
  );
  const chargePoints = new Set(config.chargers.map((c) => c.id));
  return {
    siteLimitA: config.site.limit_a ?? null,
    connector: (chargePointId, connectorId) => connectors.get(keyOf(chargePointId, connectorId)) ?? null,
    chargePointConfigured: (chargePointId) => chargePoints.has(chargePointId),
  };
}

const keyOf = (chargePointId: string, connectorId: number) => `${chargePointId}\u0000${connectorId}`;

/** The limits a plan for this connector may use, and what was lowered (or, for the minimum current, raised). */
export function boundLimits(requested: RequestedLimits, connector: ConnectorCeiling, siteLimitA: number | null): { limits: BoundedLimits; clamps: CeilingClamp[] } {
  const clamps: CeilingClamp[] = [];
  const bound = (field: CeilingField, value: number | undefined, ceiling: number, setting: string, pick: (a: number, b: number) => number): number => {
    if (value === undefined) return ceiling;
    const applied = pick(value, ceiling);
    if (applied !== value) clamps.push({ field, requested: value, applied, setting });
    return applied;
  };
  const at = connector.setting;
  const limits: BoundedLimits = {
    maxCurrentA: bound('charger.max_current_a', requested.maxCurrentA, connector.maxCurrentA, `${at}.max_current_a`, Math.min),
    // The floor the charger can signal: a client may ask for a higher minimum, not a lower one.
    minCurrentA: bound('charger.min_current_a', requested.minCurrentA, connector.minCurrentA, `${at}.min_current_a`, Math.max),
    phases: bound('charger.phases', requested.phases, connector.phases, `${at}.phases`, Math.min),
    voltageV: bound('charger.voltage_v', requested.voltageV, connector.voltageV, `${at}.voltage_v`, Math.min),
    siteLimitA:
      siteLimitA === null
        ? (requested.siteLimitA ?? null)
        : bound('site.limit_a', requested.siteLimitA ?? undefined, siteLimitA, 'site.limit_a', Math.min),
  };
  return { limits, clamps };
}
