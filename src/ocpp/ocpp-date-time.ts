// The `date-time` format OCPP 1.6 calls are checked with: ajv-formats 2.1.1's, as ocpp-rpc
// 2.2.1 pins it, not 3.x's. ajv-formats 3 requires a time zone and checks the zone's hours
// and minutes; 2.1.1 takes `2026-11-27T10:00:00` (no zone: chargers that stamp local time
// send it) and `+24:00`. Refusing them now would answer StartTransaction, StopTransaction and
// MeterValues with a FormationViolation, and a charger drops or repeats such a message
// (docs/chargers.md "What a charger sends that we cannot take"): the gateway keeps taking
// what it took before the validator moved to the bundled ajv (ocpp/validator.ts).
// Ported from ajv-formats 2.1.1 dist/formats.js (MIT, https://github.com/ajv-validator/ajv-formats/blob/v2.1.1/src/formats.ts).

const DATE = /^(\d\d\d\d)-(\d\d)-(\d\d)$/;
const DAYS = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const TIME = /^(\d\d):(\d\d):(\d\d)(\.\d+)?(z|[+-]\d\d(?::?\d\d)?)?$/i;
const DATE_TIME_SEPARATOR = /t|\s/i;

const isLeapYear = (year: number) => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);

function date(str: string): boolean {
  const m = DATE.exec(str);
  if (!m) return false;
  const year = +m[1]!;
  const month = +m[2]!;
  const day = +m[3]!;
  return month >= 1 && month <= 12 && day >= 1 && day <= (month === 2 && isLeapYear(year) ? 29 : DAYS[month]!);
}

function time(str: string): boolean {
  const m = TIME.exec(str);
  if (!m) return false;
  const hour = +m[1]!;
  const minute = +m[2]!;
  const second = +m[3]!;
  // 2.1.1 asks for a zone with `timeZone !== ""`, which an absent zone (undefined) passes: kept as it was.
  return (hour <= 23 && minute <= 59 && second <= 59) || (hour === 23 && minute === 59 && second === 60);
}

/** Whether `str` is a `date-time` as ajv-formats 2.1.1 (ocpp-rpc 2.2.1) takes it. */
export function ocppDateTime(str: string): boolean {
  const parts = str.split(DATE_TIME_SEPARATOR);
  return parts.length === 2 && date(parts[0]!) && time(parts[1]!);
}

function compareDate(d1: string | undefined, d2: string | undefined): number | undefined {
  if (!(d1 && d2)) return undefined;
  return d1 > d2 ? 1 : d1 < d2 ? -1 : 0;
}

function compareTime(t1: string | undefined, t2: string | undefined): number | undefined {
  if (!(t1 && t2)) return undefined;
  const a1 = TIME.exec(t1);
  const a2 = TIME.exec(t2);
  if (!(a1 && a2)) return undefined;
  const s1 = a1[1]! + a1[2]! + a1[3]! + (a1[4] ?? '');
  const s2 = a2[1]! + a2[2]! + a2[3]! + (a2[4] ?? '');
  return s1 > s2 ? 1 : s1 < s2 ? -1 : 0;
}

/** 2.1.1's comparison (for formatMinimum/formatMaximum; the OCPP schemas use none). */
export function compareOcppDateTime(dt1: string, dt2: string): number | undefined {
  if (!(dt1 && dt2)) return undefined;
  const [d1, t1] = dt1.split(DATE_TIME_SEPARATOR);
  const [d2, t2] = dt2.split(DATE_TIME_SEPARATOR);
  const res = compareDate(d1, d2);
  if (res === undefined) return undefined;
  return res || compareTime(t1, t2);
}
