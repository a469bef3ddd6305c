// The meter's own clock (0-0:1.0.0, `YYMMDDhhmmssX`): Dutch/Belgian local time, X = S for
// summer (CEST, UTC+2) or W for winter (CET, UTC+1). Pure.

/** UTC ms of a DSMR timestamp, or null when it is not one (DSMR 2.2/3.0 send none). */
export function parseMeterTime(raw: string): number | null {
  const m = /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})([SW])$/.exec(raw);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) return null;
  const offsetH = m[7] === 'S' ? 2 : 1;
  return Date.UTC(2000 + year, month - 1, day, hour - offsetH, minute, second);
}

const AMSTERDAM = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Amsterdam', hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });

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
  let best: number | null = null;
  for (const offsetH of [2, 1]) {
    const utcMs = Date.UTC(2000 + year, month - 1, day, hour - offsetH, minute, second);
    const p = Object.fromEntries(AMSTERDAM.formatToParts(utcMs).map((x) => [x.type, x.value]));
    if (`${p.year!.slice(2)}${p.month}${p.day}${p.hour}${p.minute}${p.second}` !== raw) continue;
    if (best === null) best = utcMs;
    else if (heardAtMs !== undefined && Math.abs(utcMs - heardAtMs) < Math.abs(best - heardAtMs)) best = utcMs;
  }
  return best;
}
