// Builds ENTSO-E A44 documents in the platform's published layout (the layout of the
// recordings in ../shared/data/entsoe), from real prices, for what the recordings lack.

export interface A44PeriodSpec {
  readonly startMs: number;
  readonly endMs: number;
  readonly resolution: 'PT15M' | 'PT30M' | 'PT60M';
  /** position -> price; positions left out are simply absent. */
  readonly points: ReadonlyArray<{ position: number; price: number }>;
}

export interface A44SeriesSpec {
  readonly eic: string;
  readonly curveType: 'A01' | 'A03';
  readonly sequence?: number;
  readonly periods: readonly A44PeriodSpec[];
}

const t = (ms: number) => new Date(ms).toISOString().slice(0, 16) + 'Z';

export function buildA44(series: readonly A44SeriesSpec[], opts: { namespace?: '7:0' | '7:3'; prefix?: string } = {}): string {
  const ns = `urn:iec62325.351:tc57wg16:451-3:publicationdocument:${opts.namespace ?? '7:3'}`;
  const p = opts.prefix ? `${opts.prefix}:` : '';
  const all = series.flatMap((s) => s.periods);
  const start = Math.min(...all.map((x) => x.startMs));
  const end = Math.max(...all.map((x) => x.endMs));
  const el = (name: string, body: string) => `<${p}${name}>${body}</${p}${name}>`;
  const ts = series
    .map(
      (s, i) => `
      ${el(
        'TimeSeries',
        `
        ${el('mRID', String(i + 1))}
        ${el('auction.type', 'A01')}
        ${el('businessType', 'A62')}
        <${p}in_Domain.mRID codingScheme="A01">${s.eic}</${p}in_Domain.mRID>
        <${p}out_Domain.mRID codingScheme="A01">${s.eic}</${p}out_Domain.mRID>
        ${el('contract_MarketAgreement.type', 'A01')}
        ${el('currency_Unit.name', 'EUR')}
        ${el('price_Measure_Unit.name', 'MWH')}
        ${s.sequence === undefined ? '' : el('classificationSequence_AttributeInstanceComponent.position', String(s.sequence))}
        ${el('curveType', s.curveType)}
        ${s.periods
          .map((per) =>
            el(
              'Period',
              `
            ${el('timeInterval', `${el('start', t(per.startMs))}${el('end', t(per.endMs))}`)}
            ${el('resolution', per.resolution)}
            ${per.points.map((pt) => el('Point', `${el('position', String(pt.position))}${el('price.amount', String(pt.price))}`)).join('\n            ')}`,
            ),
          )
          .join('\n')}`,
      )}`,
    )
    .join('');
  return `<?xml version="1.0" encoding="utf-8"?>
  <${p}Publication_MarketDocument xmlns${opts.prefix ? `:${opts.prefix}` : ''}="${ns}">
    ${el('mRID', 'built-in-test')}
    ${el('revisionNumber', '1')}
    ${el('type', 'A44')}
    ${el('createdDateTime', '2026-01-01T00:00:00Z')}
    ${el('period.timeInterval', `${el('start', t(start))}${el('end', t(end))}`)}${ts}
  </${p}Publication_MarketDocument>`;
}

/** The platform's "no data" answer (as returned for a period without prices). */
export function buildAcknowledgement(text = 'No matching data found for Data item Day-ahead Prices [12.1.D] (10YNL----------L, 10YNL----------L) and interval 2030-01-01T00:00:00.000Z/2030-01-02T00:00:00.000Z.'): string {
  return `<?xml version="1.0" encoding="utf-8"?>
<Acknowledgement_MarketDocument xmlns="urn:iec62325.351:tc57wg16:451-1:acknowledgementdocument:7:0">
  <mRID>ack-built-in-test</mRID>
  <createdDateTime>2026-01-01T00:00:00Z</createdDateTime>
  <sender_MarketParticipant.mRID codingScheme="A01">10X1001A1001A450</sender_MarketParticipant.mRID>
  <sender_MarketParticipant.marketRole.type>A32</sender_MarketParticipant.marketRole.type>
  <receiver_MarketParticipant.mRID codingScheme="A01">10X1001A1001A450</receiver_MarketParticipant.mRID>
  <receiver_MarketParticipant.marketRole.type>A39</receiver_MarketParticipant.marketRole.type>
  <received_MarketDocument.createdDateTime>2026-01-01T00:00:00Z</received_MarketDocument.createdDateTime>
  <Reason>
    <code>999</code>
    <text>${text}</text>
  </Reason>
</Acknowledgement_MarketDocument>`;
}

/** A03: leaves out every position whose price equals the previous position's. */
export function a03Points(prices: readonly number[]): Array<{ position: number; price: number }> {
  return prices.map((price, i) => ({ position: i + 1, price })).filter((pt, i) => i === 0 || prices[i - 1] !== pt.price);
}
