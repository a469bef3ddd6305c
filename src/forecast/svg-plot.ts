// An SVG figure of day-ahead forecasts against actual prices: the daily means over the
// whole evaluation, and the last two weeks period by period with the 80 % band. Pure.

export interface PlotPoint {
  readonly day: string;
  readonly slot: number;
  readonly actual: number;
  readonly forecast: number;
  readonly lower: number;
  readonly upper: number;
}

interface Panel {
  readonly title: string;
  readonly y: number;
  readonly height: number;
  readonly series: { name: string; color: string; values: number[]; dash?: boolean }[];
  readonly band?: { lower: number[]; upper: number[] };
  readonly labels: string[];
}

const W = 1100;
const LEFT = 60;
const RIGHT = 20;

function panelSvg(p: Panel): string {
  const all = p.series.flatMap((s) => s.values).concat(p.band ? [...p.band.lower, ...p.band.upper] : []).filter(Number.isFinite);
  if (all.length === 0) return '';
  let min = Math.min(...all);
  let max = Math.max(...all);
  if (max === min) max = min + 1;
  const pad = (max - min) * 0.05;
  min -= pad;
  max += pad;
  const n = Math.max(...p.series.map((s) => s.values.length));
  const x = (i: number) => LEFT + ((W - LEFT - RIGHT) * i) / Math.max(1, n - 1);
  const y = (v: number) => p.y + 20 + (p.height - 40) * (1 - (v - min) / (max - min));
  const path = (vals: number[]) => vals.map((v, i) => `${i === 0 ? 'M' : 'L'}${x(i).toFixed(1)},${y(v).toFixed(1)}`).join('');
  const parts: string[] = [];
  parts.push(`<text x="${LEFT}" y="${p.y + 14}" font-size="13" font-weight="bold">${escapeXml(p.title)}</text>`);
  for (let k = 0; k <= 4; k++) {
    const v = min + ((max - min) * k) / 4;
    parts.push(`<line x1="${LEFT}" x2="${W - RIGHT}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#ddd"/>`);
    parts.push(`<text x="${LEFT - 5}" y="${(y(v) + 4).toFixed(1)}" font-size="10" text-anchor="end">${v.toFixed(0)}</text>`);
  }
  // Sparse labels (month starts, day starts) are all shown; dense ones thinned to ~12.
  const nonEmpty = p.labels.filter((l) => l).length;
  const step = nonEmpty <= 16 ? 1 : Math.max(1, Math.ceil(p.labels.length / 12));
  p.labels.forEach((l, i) => {
    if (i % step === 0 && l) parts.push(`<text x="${x(i).toFixed(1)}" y="${p.y + p.height - 4}" font-size="10">${escapeXml(l)}</text>`);
  });
  if (p.band) {
    const up = p.band.upper.map((v, i) => `${i === 0 ? 'M' : 'L'}${x(i).toFixed(1)},${y(v).toFixed(1)}`).join('');
    const down = p.band.lower
      .map((v, i) => [i, v] as const)
      .reverse()
      .map(([i, v]) => `L${x(i).toFixed(1)},${y(v).toFixed(1)}`)
      .join('');
    parts.push(`<path d="${up}${down}Z" fill="#9ecae1" fill-opacity="0.45" stroke="none"/>`);
  }
  for (const s of p.series) {
    parts.push(`<path d="${path(s.values)}" fill="none" stroke="${s.color}" stroke-width="1.2"${s.dash ? ' stroke-dasharray="4 2"' : ''}/>`);
  }
  p.series.forEach((s, i) => {
    parts.push(`<text x="${W - RIGHT - 200 + i * 100}" y="${p.y + 14}" font-size="11" fill="${s.color}">— ${escapeXml(s.name)}</text>`);
  });
  return parts.join('\n');
}

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function forecastPlotSvg(title: string, points: readonly PlotPoint[], unit = 'EUR/MWh'): string {
  const days = [...new Set(points.map((p) => p.day))];
  const byDay = new Map<string, PlotPoint[]>();
  for (const p of points) {
    const list = byDay.get(p.day) ?? [];
    list.push(p);
    byDay.set(p.day, list);
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const daily: Panel = {
    title: `${title}: daily mean, day-ahead forecast vs actual (${unit})`,
    y: 30,
    height: 300,
    series: [
      { name: 'actual', color: '#222', values: days.map((d) => mean(byDay.get(d)!.map((p) => p.actual))) },
      { name: 'forecast', color: '#d62728', values: days.map((d) => mean(byDay.get(d)!.map((p) => p.forecast))), dash: true },
    ],
    band: { lower: days.map((d) => mean(byDay.get(d)!.map((p) => p.lower))), upper: days.map((d) => mean(byDay.get(d)!.map((p) => p.upper))) },
    labels: days.map((d) => (d.endsWith('-01') ? d.slice(0, 7) : '')),
  };
  const recent = points.filter((p) => days.slice(-14).includes(p.day));
  const detail: Panel = {
    title: `last 14 days, every period, with the 80 % bounds (${unit})`,
    y: 350,
    height: 300,
    series: [
      { name: 'actual', color: '#222', values: recent.map((p) => p.actual) },
      { name: 'forecast', color: '#d62728', values: recent.map((p) => p.forecast), dash: true },
    ],
    band: { lower: recent.map((p) => p.lower), upper: recent.map((p) => p.upper) },
    labels: recent.map((p) => (p.slot === 0 ? p.day.slice(5) : '')),
  };
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="680" viewBox="0 0 ${W} 680" font-family="sans-serif">`,
    '<rect width="100%" height="100%" fill="white"/>',
    panelSvg(daily),
    panelSvg(detail),
    '</svg>',
  ].join('\n');
}
