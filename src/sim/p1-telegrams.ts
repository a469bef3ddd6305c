// Replays a real P1 telegram as a meter would keep sending it (pure): the energy registers
// advance by the telegram's own power over the time since the first one, the meter clock
// (0-0:1.0.0) shows the time of sending in Dutch local time with its S/W suffix, M-Bus channels
// (0-n:24.2.x) the last 5-minute mark as their capture time (DSMR 2.2/3.0 0-n:24.3.0: the last
// hour, without S/W), and a
// telegram that came with a CRC gets a valid new one. Number widths stay as the meter wrote them.
// What the capture has after the '!' line (an ETX and BCC, lines a reading head adds) is sent
// after each telegram as it is.
import { dsmrCrcHex } from '../p1/crc.js';
import type { DemandValues } from './p1-demand.js';

export interface ReplayState {
  /** The telegram as captured, '/' .. '!' [CRC] CRLF. */
  readonly template: string;
  /** When the replay started (ms since epoch). */
  readonly startedAtMs: number;
  /** How far the meter's clock is off (tests of the clock cross-check); 0 by default. */
  readonly meterClockOffsetMs?: number;
}

/** x.8.1 (and x.8.0 where the meter sends a total) advance by x.7.0 power over the elapsed time. */
const ADVANCES: ReadonlyArray<{ readonly energy: readonly string[]; readonly power: string }> = [
  { energy: ['1-0:1.8.1', '1-0:1.8.0'], power: '1-0:1.7.0' },
  { energy: ['1-0:2.8.1', '1-0:2.8.0'], power: '1-0:2.7.0' },
];

/**
 * The site's load set from outside (a test's load file): the power objects show it (spread
 * evenly over the three phases, at the recorded voltages), the import register advances by
 * what p1-demand.ts integrated, and a Belgian telegram's 1-0:1.4.0 and 1-0:1.6.0 show the
 * quarter-hour average and the month's peak it computed.
 */
export interface SiteLoadValues {
  readonly powerW: number;
  readonly demand: DemandValues;
}

export function replayTelegram(state: ReplayState, nowMs: number, site?: SiteLoadValues): string {
  const bang = state.template.indexOf('!');
  const hadCrc = /^[0-9A-F]{4}/.test(state.template.slice(bang + 1));
  let body = state.template.slice(0, bang + 1);
  const hours = Math.max(0, nowMs - state.startedAtMs) / 3_600_000;
  if (site) body = withSiteLoad(body, site, (ms) => dutchTimestamp(ms + (state.meterClockOffsetMs ?? 0)));
  for (const { energy, power } of site ? [] : ADVANCES) {
    const p = valueOf(body, power);
    if (!p) continue;
    const powerW = Number(p.raw) * (p.unit === 'kW' ? 1000 : 1);
    for (const obis of energy) {
      const e = valueOf(body, obis);
      if (!e) continue;
      const addedWh = powerW * hours;
      const next = Number(e.raw) + (e.unit === 'kWh' ? addedWh / 1000 : addedWh);
      body = setValue(body, obis, formatLike(e.raw, next));
    }
  }
  if (valueOf(body, '0-0:1.0.0')) body = setValue(body, '0-0:1.0.0', dutchTimestamp(nowMs + (state.meterClockOffsetMs ?? 0)));
  // M-Bus devices (gas, water) report every 5 minutes (DSMR 5): their capture time is the last 5-minute mark.
  const captured = dutchTimestamp(Math.floor((nowMs + (state.meterClockOffsetMs ?? 0)) / 300_000) * 300_000);
  body = body.replace(/^(0-[1-4]:24\.2\.\d\()\d{12}[SW]\)/gm, `$1${captured})`);
  // DSMR 2.2/3.0 channels (0-n:24.3.0) are hourly, their time without S/W.
  const hour = dutchTimestamp(Math.floor((nowMs + (state.meterClockOffsetMs ?? 0)) / 3_600_000) * 3_600_000).slice(0, 12);
  body = body.replace(/^(0-[1-4]:24\.3\.0\()\d{12}\)/gm, `$1${hour})`);
  const afterBang = state.template.indexOf('\n', bang);
  const trailer = afterBang < 0 ? '' : state.template.slice(afterBang + 1);
  return `${body}${hadCrc ? dsmrCrcHex(body) : ''}\r\n${trailer}`;
}

function withSiteLoad(body: string, site: SiteLoadValues, meterTime: (ms: number) => string): string {
  const kw = (w: number) => w / 1000;
  const set = (obis: string, value: number) => {
    const old = valueOf(body, obis);
    if (old) body = setValue(body, obis, formatLike(old.raw, value));
  };
  set('1-0:1.7.0', kw(Math.max(0, site.powerW)));
  set('1-0:2.7.0', kw(Math.max(0, -site.powerW)));
  for (const [delivered, received, voltage, current] of [['21', '22', '32', '31'], ['41', '42', '52', '51'], ['61', '62', '72', '71']] as const) {
    set(`1-0:${delivered}.7.0`, kw(Math.max(0, site.powerW) / 3));
    set(`1-0:${received}.7.0`, kw(Math.max(0, -site.powerW) / 3));
    const volts = Number(valueOf(body, `1-0:${voltage}.7.0`)?.raw ?? 230) || 230;
    set(`1-0:${current}.7.0`, Math.abs(site.powerW) / 3 / volts);
  }
  const imported = valueOf(body, '1-0:1.8.1');
  if (imported) set('1-0:1.8.1', Number(imported.raw) + site.demand.importKwh);
  set('1-0:1.4.0', site.demand.quarterAverageKw);
  const peak = /^1-0:1\.6\.0\((\d{12}[SW])\)\(([^()*]*)\*kW\)/m.exec(body);
  if (peak) {
    const at = site.demand.monthPeak.atMs === null ? peak[1]! : meterTime(site.demand.monthPeak.atMs);
    body = body.replace(peak[0], `1-0:1.6.0(${at})(${formatLike(peak[2]!, site.demand.monthPeak.kw)}*kW)`);
  }
  return body;
}

function valueOf(body: string, obis: string): { raw: string; unit: string | null } | null {
  const m = new RegExp(`^${obis.replace(/[.*]/g, '\\$&')}\\(([^()*]*)(?:\\*([^()]*))?\\)`, 'm').exec(body);
  return m ? { raw: m[1], unit: m[2] ?? null } : null;
}

function setValue(body: string, obis: string, raw: string): string {
  return body.replace(new RegExp(`^(${obis.replace(/[.*]/g, '\\$&')}\\()[^()*]*`, 'm'), `$1${raw}`);
}

/** `n` with as many integer digits (zero-padded) and decimals as `like`. */
function formatLike(like: string, n: number): string {
  const [int, dec = ''] = like.split('.');
  const text = n.toFixed(dec.length);
  const [ni, nd] = text.split('.');
  return `${ni.padStart(int.length, '0')}${nd === undefined ? '' : `.${nd}`}`;
}

/** YYMMDDhhmmss + S (CEST) or W (CET), as a Dutch meter shows `nowMs`. */
export function dutchTimestamp(nowMs: number): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Amsterdam', year: '2-digit', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23', timeZoneName: 'short' })
      .formatToParts(new Date(nowMs))
      .map((p) => [p.type, p.value]),
  );
  const summer = parts.timeZoneName === 'CEST' || parts.timeZoneName === 'GMT+2';
  return `${parts.year}${parts.month}${parts.day}${parts.hour}${parts.minute}${parts.second}${summer ? 'S' : 'W'}`;
}
