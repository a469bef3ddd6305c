// The `region` query parameter of market_price_forecast: a market area code, optionally
// followed by `-<seconds>` (a trailing all-digit segment is the interval), e.g. `NL`,
// `NL-900`, `DE-LU`, `DE-LU-900`. Without a suffix the interval is 3600 s.

export const FORECAST_INTERVALS_S = [900, 1800, 3600] as const;
export type ForecastIntervalS = (typeof FORECAST_INTERVALS_S)[number];

export type RegionParse =
  | { readonly ok: true; readonly marketArea: string; readonly intervalS: ForecastIntervalS }
  | { readonly ok: false; readonly message: string };

/**
 * Parses `raw` (undefined = the default `NL`). `isMarket` says whether a code names a
 * known market area (already upper-cased); `configured`, named in the message for an
 * unknown one, are the regions this gateway serves.
 */
export function parseRegion(raw: string | undefined, isMarket: (code: string) => boolean, configured: readonly string[] = [], defaultRegion = 'NL'): RegionParse {
  const text = (raw ?? defaultRegion).trim().toUpperCase();
  if (text === '') return { ok: false, message: 'region must not be empty' };
  const m = /^(.*)-(\d+)$/.exec(text);
  const code = m ? m[1] : text;
  const interval = m ? Number(m[2]) : 3600;
  if (!isMarket(code)) {
    const served = configured.length > 0 ? ` (this gateway serves ${configured.join(', ')})` : '';
    return { ok: false, message: `unknown market area ${JSON.stringify(code.slice(0, 40))}${served}` };
  }
  if (!(FORECAST_INTERVALS_S as readonly number[]).includes(interval)) {
    return { ok: false, message: `interval ${interval} s is not supported; use one of ${FORECAST_INTERVALS_S.join(', ')}` };
  }
  return { ok: true, marketArea: code, intervalS: interval as ForecastIntervalS };
}
