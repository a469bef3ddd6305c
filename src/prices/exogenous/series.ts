// The exogenous series the gateway keeps per market area: day-ahead forecasts that move
// prices (total load, solar, onshore and offshore wind), in MW, UTC, native resolution.

/** Series names as stored (`exogenous_series.series`), in the order the forecaster reads them. */
export const EXOGENOUS_SERIES_NAMES = ['load', 'solar', 'wind_onshore', 'wind_offshore'] as const;
/**
 * The week-ahead total load forecast (ENTSO-E A65, processType A31): per local day the
 * forecast minimum (businessType A60) and maximum (A61), one P1D value each. Stored as their
 * own series beside the day-ahead ones (never overwriting them) and read only for the days
 * after tomorrow (forecast/week-ahead.ts); not in EXOGENOUS_SERIES_NAMES, so the backfill
 * does not chase their holes: they come with the day-ahead load's fetches.
 */
export const WEEK_AHEAD_SERIES_NAMES = ['load_week_ahead_min', 'load_week_ahead_max'] as const;
export type WeekAheadSeriesName = (typeof WEEK_AHEAD_SERIES_NAMES)[number];
export type ExogenousSeriesName = (typeof EXOGENOUS_SERIES_NAMES)[number] | WeekAheadSeriesName;

/** The series every region has; a backfill month is complete when it has no hole. */
export const REQUIRED_SERIES: ExogenousSeriesName = 'load';

/** One period of one series. */
export interface ExogenousPoint {
  readonly marketArea: string;
  readonly series: ExogenousSeriesName;
  readonly startMs: number;
  readonly durationS: number;
  /** MW (the period's value as published: ENTSO-E gives the mean power of the period). */
  readonly valueMw: number;
}

/** The ENTSO-E history files' column of each series (Kasra-Aliyon/Deepforkit layout). */
export const HISTORY_COLUMNS: Readonly<Record<(typeof EXOGENOUS_SERIES_NAMES)[number], string>> = {
  load: 'Load_DA',
  solar: 'Sol_DA',
  wind_onshore: 'Won_DA',
  wind_offshore: 'Woff_DA',
};
