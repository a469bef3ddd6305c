// Pure decoding of ENTSO-E load and generation forecast documents (GL_MarketDocument):
// A65 system total load (processType A01 = day ahead, outBiddingZone_Domain; processType
// A31 = week ahead: per day the forecast minimum, businessType A60, and maximum, A61, at
// P1D) and A69
// wind and solar forecast (A01, inBiddingZone_Domain, one TimeSeries per
// MktPSRType/psrType: B16 solar, B18 wind offshore, B19 wind onshore). The layout is the
// A44 one with `quantity` (MW) in each Point, so the A44 decoder's Period handling is
// reused: A01 lists every position (a left-out one is a gap), A03 repeats the previous
// value, any resolution (PT15M, PT60M), element local names only, "no matching data" as
// an acknowledgement.
import { acknowledgement, decodePeriod, EntsoeDocumentError, marketDocument, parseEntsoeXml, text, type Node } from '../sources/entsoe-xml.js';
import type { ExogenousPoint, ExogenousSeriesName } from './series.js';

/** psrType of an A69 series -> our series name; other production types are not kept. */
const PSR_SERIES: Readonly<Record<string, ExogenousSeriesName>> = { B16: 'solar', B18: 'wind_offshore', B19: 'wind_onshore' };
/** businessType of a week-ahead (A31) load series -> our series name. */
const WEEK_AHEAD_SERIES: Readonly<Record<string, ExogenousSeriesName>> = { A60: 'load_week_ahead_min', A61: 'load_week_ahead_max' };

export type GlResult =
  | { readonly kind: 'points'; readonly points: ExogenousPoint[]; readonly ignoredPsrTypes: readonly string[]; readonly ignoredBusinessTypes?: readonly string[] }
  | { readonly kind: 'no-data'; readonly reason: string };

/**
 * Decodes an A65 (load) or A69 (wind and solar) body for `marketArea`. A65 day-ahead
 * (processType A01 or absent) series are `load`; A65 week-ahead (A31) series are named by
 * their businessType (A60 minimum, A61 maximum; others are not kept); A69 series are
 * named by their psrType. Two series of the same name over the
 * same period are never merged: the first one is kept.
 */
export function parseGlDocument(xml: string, marketArea: string): GlResult {
  const doc = parseEntsoeXml(xml);
  const noData = acknowledgement(doc);
  if (noData) return noData;
  const gl = marketDocument(doc, 'GL_MarketDocument');
  const type = text(gl, 'type');
  if (type !== 'A65' && type !== 'A69') throw new EntsoeDocumentError(`document type ${type ?? 'missing'}, expected A65 (load forecast) or A69 (wind and solar forecast)`);
  const process = text(gl, 'process.processType');
  if (type === 'A65' && process !== undefined && process !== 'A01' && process !== 'A31') throw new EntsoeDocumentError(`load forecast of process type ${process}, expected A01 (day ahead) or A31 (week ahead)`);
  const weekAhead = type === 'A65' && process === 'A31';
  const points: ExogenousPoint[] = [];
  const ignored = new Set<string>();
  const ignoredBusiness = new Set<string>();
  const seen = new Set<string>();
  ((gl.TimeSeries as Node[] | undefined) ?? []).forEach((ts, i) => {
    const where = `TimeSeries ${i + 1}`;
    const unit = text(ts, 'quantity_Measure_Unit.name');
    if (unit && unit.toUpperCase() !== 'MAW') throw new EntsoeDocumentError(`${where}: unit ${unit}, expected MAW (MW)`);
    let series: ExogenousSeriesName;
    if (weekAhead) {
      const business = text(ts, 'businessType') ?? 'missing';
      const name = WEEK_AHEAD_SERIES[business];
      if (!name) {
        ignoredBusiness.add(business);
        return;
      }
      series = name;
    } else if (type === 'A65') series = 'load';
    else {
      const psr = ts.MktPSRType as Node | undefined;
      const psrType = psr && typeof psr === 'object' ? text(psr, 'psrType') : undefined;
      if (!psrType) throw new EntsoeDocumentError(`${where}: A69 series without MktPSRType/psrType`);
      const name = PSR_SERIES[psrType];
      if (!name) {
        ignored.add(psrType);
        return;
      }
      series = name;
    }
    const curveType = text(ts, 'curveType') ?? 'A01';
    if (curveType !== 'A01' && curveType !== 'A03') throw new EntsoeDocumentError(`${where}: curve type ${curveType} is neither A01 nor A03`);
    ((ts.Period as Node[] | undefined) ?? []).forEach((period, k) => {
      const p = decodePeriod(period, curveType, `${where} Period ${k + 1}`, 'quantity');
      const key = `${series}/${p.startMs}/${p.endMs}`;
      if (seen.has(key)) return;
      seen.add(key);
      for (const v of p.prices) points.push({ marketArea, series, startMs: v.startMs, durationS: p.resolutionS, valueMw: v.price });
    });
  });
  // Code-unit order (the series names are ASCII): localeCompare would load ICU's collation data.
  points.sort((a, b) => (a.series < b.series ? -1 : a.series > b.series ? 1 : 0) || a.startMs - b.startMs);
  return { kind: 'points', points, ignoredPsrTypes: [...ignored].sort(), ...(ignoredBusiness.size > 0 ? { ignoredBusinessTypes: [...ignoredBusiness].sort() } : {}) };
}
