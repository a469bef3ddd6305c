// The all-in price the driver pays (src/pricing/tariff.ts, tariff-cost.ts) on REAL recorded
// NL day-ahead prices (../shared/data/prices/nl-2025-quarterhour-local-utc.csv), against a
// reference written here and sharing nothing with the code under test: the CSV's own UTC
// column read by hand, the grid fee zones written as a plain `if` rule, local time from
// Intl (the code uses its own EU-rule arithmetic over zones.json), and the energy spread
// second by second. Sessions cross the spring DST change, run on the autumn change's 25-hour
// day, and cross the SDAC's switch to 15-minute periods (2025-10-01 00:00 CET), each with
// irregular readings at changing power.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { TariffConfig } from '../../src/config/types.js';
import { validateConfig } from '../../src/config/load.js';
import { requireMarket } from '../../src/prices/markets.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';
import { priceSession, type EnergyReading } from '../../src/pricing/session-cost.js';
import { priceSessionWithTariff } from '../../src/pricing/tariff-cost.js';
import { allInPlanPeriods } from '../../src/planning/all-in-periods.js';
import { marketTariffs } from '../../src/pricing/market-tariffs.js';
import { gridFeeAt, tariffFromConfig } from '../../src/pricing/tariff.js';
import { describeWithSharedData, sharedData } from '../helpers/shared-data.js';

const NL = requireMarket('NL');
const TZ = 'Europe/Amsterdam';

// A §14a module 3-like grid fee (illustrative amounts): high tariff on weekdays 17-21 in
// Q1 and Q4, low tariff every night 22-06, standard otherwise; margin as a multiplier
// and per kWh; a fee per session; 19 % VAT.
const CONFIG: TariffConfig = {
  valid_from: '2025-01-01',
  day_ahead_multiplier: 1.1,
  supplier_margin_per_kwh: 0.015,
  grid_fee: {
    per_kwh: 0.0805,
    zones: [
      { name: 'HT', per_kwh: 0.1187, from: '17:00', to: '21:00', days: ['mon', 'tue', 'wed', 'thu', 'fri'], months: [1, 2, 3, 10, 11, 12] },
      { name: 'NT', per_kwh: 0.0322, from: '22:00', to: '06:00' },
    ],
  },
  session_fee: 0.5,
  vat_rate: 0.19,
};
const TARIFF = tariffFromConfig(CONFIG, TZ);

// ---- the reference, written without the code under test ----

const localFormat = new Intl.DateTimeFormat('en-GB', { timeZone: TZ, weekday: 'short', month: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
const localCache = new Map<number, { weekday: string; month: number; minute: number }>();
function local(ms: number) {
  const key = Math.floor(ms / 60_000);
  let v = localCache.get(key);
  if (!v) {
    const parts = Object.fromEntries(localFormat.formatToParts(new Date(key * 60_000)).map((p) => [p.type, p.value]));
    v = { weekday: parts.weekday, month: Number(parts.month), minute: Number(parts.hour) * 60 + Number(parts.minute) };
    localCache.set(key, v);
  }
  return v;
}

function referenceGridFee(ms: number): [string, number] {
  const { weekday, month, minute } = local(ms);
  if (['Mon', 'Tue', 'Wed', 'Thu', 'Fri'].includes(weekday) && (month <= 3 || month >= 10) && minute >= 17 * 60 && minute < 21 * 60) return ['HT', 0.1187];
  if (minute >= 22 * 60 || minute < 6 * 60) return ['NT', 0.0322];
  return ['base', 0.0805];
}

/** EUR/kWh by UTC quarter-hour start, from the file's datum_utc column. */
function referencePrices(): Map<number, number> {
  const out = new Map<number, number>();
  for (const line of readFileSync(sharedData('prices/nl-2025-quarterhour-local-utc.csv'), 'utf8').split('\n').slice(1)) {
    const m = /^"[^"]*";"(\d{4}-\d\d-\d\d) (\d\d:\d\d):00";(-?\d+),(\d+)$/.exec(line.trim());
    if (m) out.set(Date.parse(`${m[1]}T${m[2]}:00Z`), Number(`${m[3]}.${m[4]}`));
  }
  return out;
}

const round4 = (x: number) => {
  const r = (Math.sign(x) * Math.round(Math.abs(x) * 10_000)) / 10_000;
  return r === 0 ? 0 : r;
};

function reference(readings: readonly EnergyReading[], priceKwh: Map<number, number>) {
  let dayAhead = 0;
  let margin = 0;
  let grid = 0;
  const zoneEnergy = new Map<string, number>();
  for (let i = 1; i < readings.length; i++) {
    const s0 = readings[i - 1].timestampMs / 1000;
    const s1 = readings[i].timestampMs / 1000;
    const perSecond = (readings[i].energyKwh - readings[i - 1].energyKwh) / (s1 - s0);
    for (let s = s0; s < s1; s++) {
      const ms = s * 1000;
      const price = priceKwh.get(ms - (ms % 900_000));
      if (price === undefined) throw new Error(`reference: no price at ${new Date(ms).toISOString()}`);
      const [zone, fee] = referenceGridFee(ms);
      dayAhead += perSecond * price;
      margin += perSecond * (price * 0.1 + 0.015);
      grid += perSecond * fee;
      zoneEnergy.set(zone, (zoneEnergy.get(zone) ?? 0) + perSecond);
    }
  }
  const rounded = { dayAhead: round4(dayAhead), supplierMargin: round4(margin), gridFee: round4(grid), sessionFee: 0.5 };
  const exclVat = round4(rounded.dayAhead + rounded.supplierMargin + rounded.gridFee + rounded.sessionFee);
  const vat = round4(exclVat * 0.19);
  return { exact: { dayAhead, supplierMargin: margin, gridFee: grid }, rounded, exclVat, vat, inclVat: round4(exclVat + vat), zoneEnergy };
}

/** Readings every 4-13 minutes and odd seconds, at 0-11 kW changing each interval (a fixed sequence). */
function readingsBetween(fromIso: string, toIso: string): EnergyReading[] {
  const endMs = Date.parse(toIso);
  const out: EnergyReading[] = [{ timestampMs: Date.parse(fromIso), energyKwh: 1234.5 }];
  let seed = 7;
  const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
  while (out[out.length - 1].timestampMs < endMs) {
    const prev = out[out.length - 1];
    const t = Math.min(endMs, prev.timestampMs + (240 + Math.floor(next() * 541)) * 1000);
    const kw = next() < 0.15 ? 0 : 1.4 + next() * 9.6;
    out.push({ timestampMs: t, energyKwh: prev.energyKwh + (kw * (t - prev.timestampMs)) / 3_600_000 });
  }
  return out;
}

describeWithSharedData('all-in session cost on real NL prices against an independent reference', () => {
  const periods = parsePriceCsv(readFileSync(sharedData('prices/nl-2025-quarterhour-local-utc.csv'), 'utf8'), NL).periods;
  const priceKwh = referencePrices();

  const sessions: Array<[string, string, string]> = [
    ['across the spring DST change (Sat 2025-03-29 evening to Mon 2025-03-31 HT)', '2025-03-29T19:07:13Z', '2025-03-31T16:31:07Z'],
    ['across the 15-minute switch and a season edge (Tue 2025-09-30 to Wed 2025-10-01 HT)', '2025-09-30T14:22:41Z', '2025-10-01T18:10:00Z'],
    ['on the autumn DST change day (Sun 2025-10-26 after the hour the file lacks, to Mon HT)', '2025-10-26T02:04:55Z', '2025-10-27T17:20:00Z'],
  ];

  for (const [name, fromIso, toIso] of sessions) {
    it(name, () => {
      const readings = readingsBetween(fromIso, toIso);
      const result = priceSessionWithTariff(readings, periods, TARIFF);
      if (!result.ok) throw new Error(`missing ${new Date(result.missing.startMs).toISOString()}`);
      const ref = reference(readings, priceKwh);
      const { cost } = result;
      expect(cost.exact.dayAhead).toBeCloseTo(ref.exact.dayAhead, 9);
      expect(cost.exact.supplierMargin).toBeCloseTo(ref.exact.supplierMargin, 9);
      expect(cost.exact.gridFee).toBeCloseTo(ref.exact.gridFee, 9);
      expect(cost.components).toEqual(ref.rounded);
      expect(cost.totalExclVat).toBe(ref.exclVat);
      expect(cost.vat).toBe(ref.vat);
      expect(cost.totalInclVat).toBe(ref.inclVat);
      expect(cost.vatRate).toBe(0.19);
      // Every zone the reference saw energy in, with the same energy.
      expect(new Set(cost.gridFeeByZone.map((z) => z.zone))).toEqual(new Set([...ref.zoneEnergy].filter(([, e]) => e > 0).map(([z]) => z)));
      for (const z of cost.gridFeeByZone) expect(z.energyKwh).toBeCloseTo(ref.zoneEnergy.get(z.zone)!, 5);
      // The day-ahead line is what the gateway bills without a tariff, to the cent.
      const dayAheadOnly = priceSession(readings, periods);
      expect(dayAheadOnly.ok && Math.abs(dayAheadOnly.totalCostExclVat - cost.components.dayAhead)).toBeLessThan(0.0002);
    });
  }

  it('the sessions really exercise the zones across the changes (HT, NT and base all billed)', () => {
    for (const [, fromIso, toIso] of sessions) {
      const result = priceSessionWithTariff(readingsBetween(fromIso, toIso), periods, TARIFF);
      expect(result.ok && result.cost.gridFeeByZone.map((z) => z.zone).sort()).toEqual(['HT', 'NT', 'base']);
    }
  });

  it('a gap in the recorded prices is named, as without a tariff (2025-10-26 01:00Z, the autumn hour the file lacks)', () => {
    const readings = readingsBetween('2025-10-26T00:30:00Z', '2025-10-26T03:00:00Z');
    const result = priceSessionWithTariff(readings, periods, TARIFF);
    expect(result.ok).toBe(false);
    expect(!result.ok && new Date(result.missing.startMs).toISOString()).toBe('2025-10-26T01:00:00.000Z');
  });
});

describe('grid fee zones in local time', () => {
  const fee = (iso: string) => gridFeeAt(TARIFF, Date.parse(iso)).zone;

  it('a zone edge at 17:00 local moves in UTC with DST (CET 16:00Z, CEST 15:00Z)', () => {
    expect([fee('2025-03-28T15:59:00Z'), fee('2025-03-28T16:00:00Z')]).toEqual(['base', 'HT']); // Fri, CET
    expect([fee('2025-03-31T14:59:00Z'), fee('2025-03-31T15:00:00Z')]).toEqual(['base', 'HT']); // Mon, CEST
    expect([fee('2025-10-27T15:59:00Z'), fee('2025-10-27T16:00:00Z')]).toEqual(['base', 'HT']); // Mon, CET again
  });

  it('weekdays and months are the local ones; a zone past midnight wraps', () => {
    expect(fee('2025-03-29T16:30:00Z')).toBe('base'); // Saturday
    expect(fee('2025-04-01T15:30:00Z')).toBe('base'); // April: not in the months
    expect(fee('2025-09-30T15:30:00Z')).toBe('base'); // September
    expect(fee('2025-09-30T22:30:00Z')).toBe('NT'); // 00:30 local on 1 October
    expect(fee('2025-10-01T03:59:00Z')).toBe('NT'); // 05:59 local
    expect(fee('2025-10-01T04:00:00Z')).toBe('base'); // 06:00 local
    expect(fee('2025-01-05T20:59:00Z')).toBe('base'); // 21:59 CET
    expect(fee('2025-01-05T21:00:00Z')).toBe('NT'); // 22:00 CET
  });

  it('to "24:00" and "00:00" both end at midnight; the first zone that applies wins', () => {
    const t = tariffFromConfig({ ...CONFIG, grid_fee: { per_kwh: 0.1, zones: [
      { name: 'evening', per_kwh: 0.2, from: '20:00', to: '24:00' },
      { name: 'late', per_kwh: 0.3, from: '23:00', to: '00:00' },
    ] } }, 'Europe/Brussels');
    const z = (iso: string) => gridFeeAt(t, Date.parse(iso));
    expect(z('2025-06-01T17:59:00Z')).toEqual({ zone: 'base', perKwh: 0.1 }); // 19:59 CEST
    expect(z('2025-06-01T18:00:00Z')).toEqual({ zone: 'evening', perKwh: 0.2 });
    expect(z('2025-06-01T21:30:00Z')).toEqual({ zone: 'evening', perKwh: 0.2 }); // 23:30: evening is first
    expect(z('2025-06-01T22:00:00Z')).toEqual({ zone: 'base', perKwh: 0.1 }); // midnight
  });

  it('a flat fee with no zones is one span whatever the time', () => {
    const flat = tariffFromConfig({ ...CONFIG, grid_fee: { per_kwh: 0.07, zones: [] } }, TZ);
    expect(gridFeeAt(flat, Date.parse('2025-03-30T01:30:00Z'))).toEqual({ zone: 'base', perKwh: 0.07 });
  });
});

describe('tariffs in the config schema', () => {
  const base = { organization_id: '6a1f0b8e-2c3d-4e5f-8a9b-0c1d2e3f4a5b', mqtt: { url: 'mqtts://broker.example:8883' } };
  const problems = (tariffs: unknown) => {
    try {
      validateConfig({ ...base, tariffs }, 'test', {});
      return [];
    } catch (err) {
      return (err as { problems?: string[] }).problems ?? [String(err)];
    }
  };

  it('fills the defaults of a minimal tariff', () => {
    const config = validateConfig({ ...base, tariffs: { NL: [{ valid_from: '2025-01-01', vat_rate: 0.21 }] } }, 'test', {});
    expect(config.tariffs).toEqual({ NL: [{ valid_from: '2025-01-01', vat_rate: 0.21, day_ahead_multiplier: 1, supplier_margin_per_kwh: 0, grid_fee: { per_kwh: 0, zones: [] }, session_fee: 0 }] });
  });

  it('refuses an unknown market, a tariff without VAT or valid_from, zone edges off the quarter-hour, tariffs out of order', () => {
    const v = '2025-01-01';
    expect(problems({ XX: [{ valid_from: v, vat_rate: 0.2 }] }).join('\n')).toMatch(/tariffs\.XX: not a known market area/);
    expect(problems({ NL: [{ valid_from: v }] }).join('\n')).toMatch(/vat_rate/);
    expect(problems({ NL: [{ vat_rate: 0.21 }] }).join('\n')).toMatch(/valid_from/);
    expect(problems({ NL: { valid_from: v, vat_rate: 0.21 } }).join('\n')).toMatch(/tariffs\/NL|tariffs\.NL/);
    expect(problems({ NL: [{ valid_from: v, vat_rate: 0.21, grid_fee: { zones: [{ name: 'peak', per_kwh: 0.1, from: '17:10', to: '21:00' }] } }] }).join('\n')).toMatch(/from/);
    expect(problems({ NL: [{ valid_from: v, vat_rate: 0.21, grid_fee: { zones: [{ name: 'peak', per_kwh: 0.1, from: '17:00', to: '21:00', days: ['monday'] }] } }] }).join('\n')).toMatch(/days/);
    expect(problems({ NL: [{ valid_from: '2026-01-01', vat_rate: 0.21 }, { valid_from: v, vat_rate: 0.21 }] })).toEqual(['tariffs.NL[1].valid_from: 2025-01-01 must be after the tariff before it (2026-01-01): list the tariffs oldest first']);
  });
});

describe('the tariff in force', () => {
  const list = [
    { ...CONFIG, valid_from: '2025-03-30', session_fee: 1 },
    { ...CONFIG, valid_from: '2025-10-26', session_fee: 2 },
  ];
  const tariffOf = marketTariffs({ NL: list });

  it('from the local midnight of valid_from (also on DST days) until the next one; none before the first, none for other markets', () => {
    const fee = (iso: string) => tariffOf('NL', Date.parse(iso))?.sessionFee ?? null;
    expect(fee('2025-03-29T22:59:59Z')).toBeNull(); // 23:59:59 CET on the 29th
    expect(fee('2025-03-29T23:00:00Z')).toBe(1); // 00:00 CET on the 30th (the DST change is at 02:00)
    expect(fee('2025-10-25T21:59:59Z')).toBe(1); // 23:59:59 CEST on the 25th
    expect(fee('2025-10-25T22:00:00Z')).toBe(2); // 00:00 CEST on the 26th
    expect(fee('2030-01-01T00:00:00Z')).toBe(2);
    expect(tariffOf('nl', Date.parse('2026-01-01T00:00:00Z'))?.sessionFee).toBe(2);
    expect(tariffOf('DE-LU', Date.parse('2026-01-01T00:00:00Z'))).toBeUndefined();
  });

  it('plan periods before the first tariff keep their day-ahead price', () => {
    const periods = [
      { startMs: Date.parse('2025-03-29T22:00:00Z'), durationS: 3600, pricePerMwh: 50, lowerPerMwh: 50, upperPerMwh: 50, forecast: false },
      { startMs: Date.parse('2025-03-29T23:00:00Z'), durationS: 3600, pricePerMwh: 50, lowerPerMwh: 50, upperPerMwh: 50, forecast: false },
    ];
    // 23:00 CET is NT: 50 x 1.1 + (0.015 + 0.0322) x 1000 = 55 + 15 + 32.2 = 102.2
    const out = allInPlanPeriods(periods, (atMs) => tariffOf('NL', atMs));
    expect(out[0]).toEqual(periods[0]);
    expect(out[1].pricePerMwh).toBeCloseTo(102.2, 9);
  });
});

describe('all-in plan periods (planning/all-in-periods.ts)', () => {
  it('cuts a period at a zone edge and prices each part at day-ahead x multiplier + margin + grid fee, per MWh', () => {
    const t = tariffFromConfig({ valid_from: '2025-01-01', day_ahead_multiplier: 1.5, supplier_margin_per_kwh: 0.01, grid_fee: { per_kwh: 0.05, zones: [{ name: 'peak', per_kwh: 0.2, from: '17:30', to: '21:00' }] }, session_fee: 1, vat_rate: 0.21 }, TZ);
    // Monday 2025-01-06 16:00Z = 17:00 CET: an hour at 100 EUR/MWh (forecast 80..130), cut at 17:30 local.
    const out = allInPlanPeriods([{ startMs: Date.parse('2025-01-06T16:00:00Z'), durationS: 3600, pricePerMwh: 100, lowerPerMwh: 80, upperPerMwh: 130, forecast: true }], () => t);
    // 100 x 1.5 + (0.01 + 0.05) x 1000 = 210; 80 -> 180; 130 -> 255; in the peak + 150 each.
    expect(out).toEqual([
      { startMs: Date.parse('2025-01-06T16:00:00Z'), durationS: 1800, pricePerMwh: 210, lowerPerMwh: 180, upperPerMwh: 255, forecast: true },
      { startMs: Date.parse('2025-01-06T16:30:00Z'), durationS: 1800, pricePerMwh: 360, lowerPerMwh: 330, upperPerMwh: 405, forecast: true },
    ]);
  });
});
