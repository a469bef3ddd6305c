// Values that cross module boundaries, in the domain's words.

/** One measured quantity, as it appears in a measurement message. */
export interface Metric {
  readonly name: string;
  readonly value: number;
  readonly unit: string;
}

/** What one poll of one meter produced, after sanity checks. */
export interface MeterSample {
  readonly resourceId: string;
  /** When the values were read, ms since epoch (UTC). */
  readonly sampledAtMs: number;
  readonly metrics: readonly Metric[];
}

export type MeterState = 'unknown' | 'online' | 'offline';

/** Live state of one configured meter, for heartbeats, network scans, /healthz and the status page. */
export interface MeterStatus {
  readonly resourceId: string;
  readonly bus: string;
  readonly unitId: number;
  readonly profile: string;
  readonly state: MeterState;
  readonly lastAnsweredAtMs: number | null;
  readonly lastSample: MeterSample | null;
  readonly consecutiveMisses: number;
  /** Why the meter gives no sample, in one line with the fix, where its source can tell (P1). */
  readonly problem?: string | null;
  /** A Belgian P1 meter's capacity objects from its last published telegram (p1/demand.ts): shown, not published upstream. */
  readonly demand?: import('./p1/demand.js').P1Demand | null;
}

/** One day-ahead price period at native resolution. */
export interface PricePeriod {
  readonly marketArea: string;
  /** Period start, ms since epoch (UTC). */
  readonly startMs: number;
  readonly durationS: number;
  readonly pricePerMwh: number;
}
