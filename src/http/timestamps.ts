// Timestamps at the HTTP edge: RFC 3339 date-times that say where they are on the time
// line (`Z` or a numeric offset). A local time without either is ambiguous, so refused.
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** ms since epoch, or a message saying what is wrong. Fractions below 1 ms are dropped. */
export function parseTimestamp(text: string): number | string {
  const m = RFC3339.exec(text);
  if (!m) {
    return /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(text)
      ? 'must carry a UTC designator (Z) or a numeric offset, e.g. 2024-01-15T10:00:00Z'
      : 'must be an RFC 3339 date-time with Z or an offset, e.g. 2024-01-15T10:00:00Z';
  }
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number);
  const ms = m[7] ? Number(m[7].slice(0, 3).padEnd(3, '0')) : 0;
  if (year < 1970 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return 'is not a valid date-time';
  const utc = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  if (new Date(utc).getUTCDate() !== day) return 'is not a valid date (no such day in that month)';
  if (m[8]) return utc;
  const offH = Number(m[10]);
  const offM = Number(m[11]);
  if (offH > 18 || offM > 59) return 'has an invalid UTC offset';
  const sign = m[9] === '+' ? 1 : -1;
  return utc - sign * (offH * 60 + offM) * 60_000;
}

/** `2024-01-15T10:00:00Z`, with milliseconds only when there are some. */
export function formatUtc(ms: number): string {
  const iso = new Date(ms).toISOString();
  return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso;
}
