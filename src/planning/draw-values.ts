// Pure: a charger's measured current and power values (store/draw-values.ts rows) as what a
// car drew at each instant (car-draw.ts DrawSample) and what a connector draws now
// (site-load.ts ConnectorDraw).
import type { DrawValueRow } from '../store/draw-values.js';
import type { DrawSample } from './car-draw.js';
import type { ConnectorDraw } from './site-load.js';

const PHASES = ['L1', 'L2', 'L3'] as const;

const watts = (r: DrawValueRow): number => (r.unit === 'kW' ? r.value * 1000 : r.value);

/**
 * What the transaction drew at each instant of `rows` (oldest first): Current.Import per
 * phase (a phase not given is 0) and Power.Active.Import (the total, else the sum of its phases).
 */
export function drawSamples(rows: readonly DrawValueRow[]): DrawSample[] {
  const byInstant = new Map<number, DrawValueRow[]>();
  for (const r of rows) {
    const list = byInstant.get(r.sampledAtMs) ?? [];
    list.push(r);
    byInstant.set(r.sampledAtMs, list);
  }
  return [...byInstant].map(([atMs, values]) => {
    const currents = values.filter((r) => r.measurand === 'Current.Import');
    const phase = (p: string) => currents.find((r) => r.phase === p || r.phase === `${p}-N`)?.value;
    const perPhase = PHASES.map(phase);
    const powers = values.filter((r) => r.measurand === 'Power.Active.Import').map((r) => ({ ...r, w: watts(r) }));
    const totalW = powers.find((r) => r.phase === '')?.w ?? (powers.length > 0 ? powers.reduce((t, r) => t + r.w, 0) : null);
    return {
      atMs,
      currentsA: perPhase.some((a) => a !== undefined) ? (perPhase.map((a) => a ?? 0) as [number, number, number]) : null,
      powerW: totalW,
    };
  });
}

/**
 * Current per phase a connector draws from the values of one instant, or null without any.
 * Current.Import wins over power; a value without a phase is taken as each used phase's;
 * power is turned into current at `voltageV` (a total over `phases`).
 */
export function connectorDrawOf(rows: readonly DrawValueRow[], phases: number, voltageV: number): ConnectorDraw | null {
  if (rows.length === 0) return null;
  const used = phases >= 3 ? 3 : 1;
  const fromRows = (measurand: string, toA: (r: DrawValueRow, perPhase: boolean) => number): [number, number, number] | null => {
    const of = rows.filter((r) => r.measurand === measurand);
    if (of.length === 0) return null;
    const byPhase = PHASES.map((p) => of.find((r) => r.phase === p || r.phase === `${p}-N`));
    if (byPhase.some((r) => r !== undefined)) return byPhase.map((r) => (r ? toA(r, true) : 0)) as [number, number, number];
    const total = of.find((r) => r.phase === '');
    if (!total) return null;
    const a = toA(total, false);
    return [a, used === 3 ? a : 0, used === 3 ? a : 0];
  };
  const currents =
    fromRows('Current.Import', (r) => r.value) ??
    fromRows('Power.Active.Import', (r, perPhase) => {
      const w = watts(r);
      return perPhase ? w / voltageV : w / (used * voltageV);
    });
  return currents ? { sampledAtMs: rows[0]!.sampledAtMs, currentsA: currents } : null;
}
