// Builds ENTSO-E A69 (wind and solar forecast) documents in the platform's published
// layout — the GL_MarketDocument of the recorded A65 in ../shared/data/entsoe, with one
// TimeSeries per MktPSRType/psrType and inBiddingZone_Domain — from real values (the
// history files' Sol_DA, Won_DA, Woff_DA), because no real A69 response is recorded.

export interface GlSeriesSpec {
  readonly psrType: string;
  readonly startMs: number;
  readonly resolution: 'PT15M' | 'PT60M';
  readonly values: readonly number[];
}

const t = (ms: number) => new Date(ms).toISOString().slice(0, 16) + 'Z';

export function buildA69(eic: string, series: readonly GlSeriesSpec[]): string {
  const stepMs = (r: GlSeriesSpec['resolution']) => (r === 'PT15M' ? 900_000 : 3_600_000);
  const start = Math.min(...series.map((s) => s.startMs));
  const end = Math.max(...series.map((s) => s.startMs + s.values.length * stepMs(s.resolution)));
  const ts = series
    .map(
      (s, i) => `
    <TimeSeries>
        <mRID>${i + 1}</mRID>
        <businessType>A94</businessType>
        <objectAggregation>A08</objectAggregation>
        <inBiddingZone_Domain.mRID codingScheme="A01">${eic}</inBiddingZone_Domain.mRID>
        <quantity_Measure_Unit.name>MAW</quantity_Measure_Unit.name>
        <curveType>A01</curveType>
        <MktPSRType>
            <psrType>${s.psrType}</psrType>
        </MktPSRType>
        <Period>
            <timeInterval>
                <start>${t(s.startMs)}</start>
                <end>${t(s.startMs + s.values.length * stepMs(s.resolution))}</end>
            </timeInterval>
            <resolution>${s.resolution}</resolution>
${s.values.map((v, k) => `            <Point>\n                <position>${k + 1}</position>\n                <quantity>${v}</quantity>\n            </Point>`).join('\n')}
        </Period>
    </TimeSeries>`,
    )
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?>
<GL_MarketDocument xmlns="urn:iec62325.351:tc57wg16:451-6:generationloaddocument:3:0">
    <mRID>built-in-test</mRID>
    <revisionNumber>1</revisionNumber>
    <type>A69</type>
    <process.processType>A01</process.processType>
    <sender_MarketParticipant.mRID codingScheme="A01">10X1001A1001A450</sender_MarketParticipant.mRID>
    <sender_MarketParticipant.marketRole.type>A32</sender_MarketParticipant.marketRole.type>
    <receiver_MarketParticipant.mRID codingScheme="A01">10X1001A1001A450</receiver_MarketParticipant.mRID>
    <receiver_MarketParticipant.marketRole.type>A33</receiver_MarketParticipant.marketRole.type>
    <createdDateTime>2020-11-18T17:00:00Z</createdDateTime>
    <time_Period.timeInterval>
        <start>${t(start)}</start>
        <end>${t(end)}</end>
    </time_Period.timeInterval>${ts}
</GL_MarketDocument>
`;
}
