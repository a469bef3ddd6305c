// Timestamps at the HTTP edge: RFC 3339 date-times that say where they are on the time
// line (`Z` or a numeric offset). A local time without either is ambiguous, so refused.
// Hand-rolled digit parsing: a week of 10-s readings is 60,480 timestamps per request,
// and a regex + Date round trip per timestamp cost most of the request's time.

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const NO_ZONE = 'must carry a UTC designator (Z) or a numeric offset, e.g. 2024-01-15T10:00:00Z';
const NOT_RFC3339 = 'must be an RFC 3339 date-time with Z or an offset, e.g. 2024-01-15T10:00:00Z';

/** Value of `n` ASCII digits at `at`, or -1 if any is not a digit. */
function digits(s: string, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** ms since epoch, or a message saying what is wrong. Fractions below 1 ms are dropped. */
export function parseTimestamp(s: string): number | string {
  // YYYY-MM-DDTHH:MM:SS[.f{1,9}](Z|±HH:MM)
  if (s.length < 20 || s.length > 35) return s.length >= 16 && s.length < 20 && /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}/.test(s) ? NO_ZONE : NOT_RFC3339;
  const year = digits(s, 0, 4);
  const month = digits(s, 5, 2);
  const day = digits(s, 8, 2);
  const hour = digits(s, 11, 2);
  const minute = digits(s, 14, 2);
  const second = digits(s, 17, 2);
  const t = s.charCodeAt(10);
  if (year < 0 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0 || s[4] !== '-' || s[7] !== '-' || s[13] !== ':' || s[16] !== ':' || (t !== 84 && t !== 116)) {
    return NOT_RFC3339;
  }
  let i = 19;
  let ms = 0;
  if (s[i] === '.') {
    let n = 0;
    i++;
    while (i < s.length) {
      const c = s.charCodeAt(i) - 48;
      if (c < 0 || c > 9) break;
      if (n < 3) ms = ms * 10 + c;
      n++;
      i++;
    }
    if (n === 0 || n > 9) return NOT_RFC3339;
    for (let k = n; k < 3; k++) ms *= 10;
  }
  let offsetMin = 0;
  const z = s[i];
  if ((z === 'Z' || z === 'z') && i + 1 === s.length) {
    // UTC
  } else if ((z === '+' || z === '-') && i + 6 === s.length && s[i + 3] === ':') {
    const oh = digits(s, i + 1, 2);
    const om = digits(s, i + 4, 2);
    if (oh < 0 || om < 0) return NOT_RFC3339;
    if (oh > 18 || om > 59) return 'has an invalid UTC offset';
    offsetMin = (z === '+' ? 1 : -1) * (oh * 60 + om);
  } else {
    return i === s.length ? NO_ZONE : NOT_RFC3339;
  }
  if (year < 1970 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return 'is not a valid date-time';
  const leap = month === 2 && (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0));
  if (day > DAYS_IN_MONTH[month - 1] + (leap ? 1 : 0)) return 'is not a valid date (no such day in that month)';
  return daysFromCivil(year, month, day) * 86_400_000 + ((hour * 60 + minute - offsetMin) * 60 + second) * 1000 + ms;
}

/**
 * The nanoseconds below the millisecond of a timestamp parseTimestamp accepted
 * (`…37.708914Z` → 914000), so an answer can give back the instant it was given;
 * 0 when the fraction has 3 digits or fewer. An offset never changes these digits.
 */
export function subMillisecondNs(s: string): number {
  if (s[19] !== '.') return 0;
  let ns = 0;
  let n = 0; // fraction digits seen
  for (let i = 20; n < 9; i++, n++) {
    const c = s.charCodeAt(i) - 48;
    if (!(c >= 0 && c <= 9)) break;
    if (n >= 3) ns = ns * 10 + c;
  }
  for (; n < 9; n++) if (n >= 3) ns *= 10;
  return ns;
}

/**
 * `2024-01-15T10:00:00Z`, with milliseconds only when there are some, and with the digits
 * below the millisecond (`subMsNs`, 0..999999) as far as they are not zero:
 * `…37.708914Z`, `…37.708914123Z`.
 */
export function formatUtc(ms: number, subMsNs = 0): string {
  const iso = new Date(ms).toISOString();
  if (subMsNs === 0) return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso;
  const digits = subMsNs % 1000 === 0 ? String(subMsNs / 1000).padStart(3, '0') : String(subMsNs).padStart(6, '0');
  return `${iso.slice(0, -1)}${digits}Z`;
}
