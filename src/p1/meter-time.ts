// The meter's own clock (0-0:1.0.0, `YYMMDDhhmmssX`): Dutch/Belgian local time, X = S for
// summer (CEST, UTC+2) or W for winter (CET, UTC+1). Pure.
import { wallToUtc } from '../prices/timezone.js';

/** UTC ms of a DSMR timestamp, or null when it is not one (DSMR 2.2/3.0 send none). */
export function parseMeterTime(raw: string): number | null {
  const m = /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})([SW])$/.exec(raw);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) return null;
  const offsetH = m[7] === 'S' ? 2 : 1;
  return Date.UTC(2000 + year, month - 1, day, hour - offsetH, minute, second);
}

/**
 * UTC ms of a DSMR 2.2/3.0 timestamp, `YYMMDDhhmmss` in Dutch local time without the S/W of
 * later versions, or null when it is not one. The hour repeated when summer time ends (02:xx
 * twice in October) is the pass nearest to `heardAtMs`, when the telegram was received (without
 * it: the earlier, summer time one); an hour skipped when it begins does not exist: null.
 */
export function parseDutchLocalTime(raw: string, heardAtMs?: number): number | null {
  const m = /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(raw);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) return null;
  // Not Intl: its time-zone data costs ~11.5 MB of RSS on Node 24 (docs/architecture.md "Memory").
  const wallMs = Date.UTC(2000 + year, month - 1, day, hour, minute, second);
  if (new Date(wallMs).getUTCDate() !== day) return null;
  // One instant, none (the spring gap), or two (October's repeated 02:xx, earlier first).
  let best: number | null = null;
  for (const utcMs of wallToUtc('Europe/Amsterdam', wallMs)) {
    if (best === null) best = utcMs;
    else if (heardAtMs !== undefined && Math.abs(utcMs - heardAtMs) < Math.abs(best - heardAtMs)) best = utcMs;
  }
  return best;
}
