// The Belgian capacity tariff held by the running gateway (issue 34 item 5, docs/planning.md
// "The capacity peak"): the recorded Fluvius e-MUCS telegram (../shared/data/dsmr/
// fluvius_v171.txt: quarter-hour so far at 2.351 kW, month's peak 2.589 kW) replayed by the P1
// simulator on a socat pty, its power set each moment by this test to the rest of the site
// (stepping 0.4 → 1.7 → 0.6 kW) plus what the strict ocpp-rpc charger draws under the
// profiles it was sent; the meter computes 1-0:1.4.0 and 1-0:1.6.0 from it (sim/p1-demand.ts).
// The gateway's and the simulator's clocks run 40 times real time, so a whole quarter-hour
// (06:15-06:30, or the next one when the start was slow) passes in 22.5 s. The reference, computed here from the load series the meter was
// given (not from the gateway's or the meter's arithmetic): no quarter-hour's average above the
// month's peak, while charging drawn at the charger's full current would have gone over it.
import { mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MeterSample } from '../../src/domain.js';
import type { P1Demand } from '../../src/p1/demand.js';
import { connectSimulatedCharger, limitAt, type SentProfile, type SimulatedCharger } from '../helpers/ocpp-charger.js';
import { expectDocumented } from '../helpers/openapi.js';
import { hasSocat } from '../helpers/peers.js';
import { hasSharedData, sharedData } from '../helpers/shared-data.js';
import { startSiteGateway, type SiteGateway } from '../helpers/site-gateway.js';
import { until } from '../helpers/wait.js';

const SITE_METER = '6f0c9a2e-3b7d-4e51-9c08-1d2a4b6e8f30';
const PASSWORD = 'charger-secret-0123456789';
const PLAN_PATH = '/api/v1/chargers/{charge_point_id}/connectors/{connector_id}/plan';
const RATE = 40;
const START = '2025-05-11T06:09:00Z';
const QUARTER_MS = 900_000;
/** The recorded telegram's month's peak and the quarter-hour's average so far. */
const MONTH_PEAK_KW = 2.589;
const RECORDED_AVERAGE_KW = 2.351;
const VOLTAGE_V = 230;
const MIN_A = 6;
const MAX_A = 16;

/** The rest of the site (kW) at a gateway instant: a step up from 5 to 9 minutes into each quarter-hour after the first. */
function otherLoadKw(atMs: number): number {
  const intoMs = atMs % QUARTER_MS;
  if (atMs < Math.ceil(Date.parse(START) / QUARTER_MS) * QUARTER_MS || intoMs < 300_000) return 0.4;
  return intoMs < 540_000 ? 1.7 : 0.6;
}

interface LoadPoint {
  readonly atMs: number;
  readonly otherKw: number;
  readonly chargingKw: number;
}

describe.skipIf(!hasSharedData || !hasSocat)('a Fluvius site meter: charging never raises a quarter-hour above the month\'s peak', () => {
  let gw: SiteGateway;
  let charger: SimulatedCharger;
  let loadFile: string;
  const samples: MeterSample[] = [];
  const demands: Array<{ atMs: number; demand: P1Demand }> = [];
  const series: LoadPoint[] = [];
  let feeding: NodeJS.Timeout | undefined;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mg-capacity-'));
    loadFile = join(dir, 'load-w');
    writeFileSync(loadFile, String(otherLoadKw(Date.parse(START)) * 1000));
    gw = await startSiteGateway({
      dir,
      siteMeter: SITE_METER,
      p1Telegram: sharedData('dsmr/fluvius_v171.txt'),
      simArgs: ['--load-file', loadFile, '--p1-period-ms', '200'],
      clock: { startIso: START, rate: RATE },
      site: { limit_a: 25, max_reading_age_s: 120, raise_interval_s: 30, raise_hysteresis_a: 1, lower_deadline_s: 300, capacity: { eur_per_kw_month: 3.37, margin_kw: 0.2, raise_peak_for_departure: false } },
      chargers: [{ id: 'CP-BE', password: PASSWORD, auth: 'accept_all', connectors: [{ connector_id: 1, max_current_a: MAX_A, min_current_a: MIN_A, phases: 1 }] }],
      beforeStart: (ctx) => {
        ctx.events.on('sample.taken', (s) => void (s.resourceId === SITE_METER && samples.push(s)));
        ctx.events.on('meter.demand', (e) => void demands.push({ atMs: e.sampledAtMs, demand: e.demand }));
      },
    });
    charger = await connectSimulatedCharger(gw.ocppPort, 'CP-BE', PASSWORD);
    await charger.client.call('BootNotification', { chargePointVendor: 'Alfen', chargePointModel: 'Eve Single' });
  }, 60_000);

  afterAll(async () => {
    if (feeding) clearInterval(feeding);
    await charger?.client.close({ force: true }).catch(() => undefined);
    await gw?.stop();
  });

  /** What the car draws now (A): the last profile's limit in force, at most the connector's maximum; below the minimum current it pauses. */
  function drawnA(): number {
    const profile = charger.profiles.filter((p) => p.csChargingProfiles.chargingProfilePurpose === 'TxProfile').at(-1);
    if (!profile) return 0;
    const schedule = profile.csChargingProfiles.chargingSchedule;
    const limit = limitAt(profile as SentProfile, (gw.now() - Date.parse(schedule.startSchedule)) / 1000);
    const amps = schedule.chargingRateUnit === 'W' ? limit / VOLTAGE_V : limit;
    const a = Math.min(MAX_A, Number.isFinite(amps) ? amps : 0);
    return a >= MIN_A ? a : 0;
  }

  // About 25 s of wall time are the replayed quarter-hour itself (the gateway's clock runs fast): the
  // test's timeout leaves a loaded machine room above it and above the wait's own 60 s.
  it('holds 06:15-06:30 under 2.589 kW with the load stepping, where full-current charging would not; the plan says what the departure would cost', { timeout: 120_000 }, async () => {
    await until(() => samples.length >= 1 && demands.length >= 1, 'the Fluvius site meter read', 20_000);
    const put = await fetch(`http://127.0.0.1:${gw.httpPort}/api/v1/chargers/CP-BE/connectors/1/plan`, {
      method: 'PUT',
      headers: { authorization: `Token ${gw.cpoToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ departure_time: '2025-05-11T07:30:00Z', energy_wh: 30_000 }),
    });
    expect(put.status).toBe(201);
    const { transactionId } = (await charger.client.call('StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: 0, timestamp: new Date(gw.now()).toISOString() })) as { transactionId: number };
    // The site's power, every 100 ms (3 s of gateway time): the other load plus what the car draws; the charger reports its current.
    let registerWh = 0;
    let lastMs = gw.now();
    let ticks = 0;
    feeding = setInterval(() => {
      const atMs = gw.now();
      const a = drawnA();
      const point = { atMs, otherKw: otherLoadKw(atMs), chargingKw: (a * VOLTAGE_V) / 1000 };
      registerWh += ((series.at(-1)?.chargingKw ?? 0) * 1000 * (atMs - lastMs)) / 3_600_000;
      lastMs = atMs;
      series.push(point);
      // Written whole (a rename): the simulator never reads a half-written file.
      writeFileSync(`${loadFile}.next`, String(Math.round((point.otherKw + point.chargingKw) * 1000)));
      renameSync(`${loadFile}.next`, loadFile);
      if (ticks++ % 3 === 0) {
        void charger.client
          .call('MeterValues', {
            connectorId: 1,
            transactionId,
            meterValue: [{ timestamp: new Date(atMs).toISOString(), sampledValue: [
              { value: a.toFixed(1), measurand: 'Current.Import', phase: 'L1', unit: 'A', context: 'Sample.Periodic' },
              { value: registerWh.toFixed(0), measurand: 'Energy.Active.Import.Register', unit: 'Wh', context: 'Sample.Periodic' },
            ] }],
          })
          .catch(() => undefined);
      }
    }, 100);
    // The first whole quarter-hour the load series covers (06:15-06:30 unless the start was slow).
    const fromMs = Math.ceil(series.length > 0 ? series[0]!.atMs / QUARTER_MS : gw.now() / QUARTER_MS) * QUARTER_MS;
    const QUARTER = { fromMs, toMs: fromMs + QUARTER_MS };
    await until(() => gw.now() >= QUARTER.toMs + 20_000, 'the first whole quarter-hour passed (gateway time)', 60_000, 50);
    clearInterval(feeding);
    feeding = undefined;

    // The reference: each quarter-hour's average from the load series (held from point to point).
    const average = (fromMs: number, toMs: number, priorKwh: number, kw: (p: LoadPoint) => number) => {
      let kwh = priorKwh;
      series.forEach((p, i) => {
        const from = Math.max(fromMs, p.atMs);
        const to = Math.min(toMs, series[i + 1]?.atMs ?? toMs);
        if (to > from) kwh += (kw(p) * (to - from)) / 3_600_000;
      });
      return (kwh * 3_600_000) / (toMs - fromMs);
    };
    const whole = average(QUARTER.fromMs, QUARTER.toMs, 0, (p) => p.otherKw + p.chargingKw);
    const charged = average(QUARTER.fromMs, QUARTER.toMs, 0, (p) => p.chargingKw);
    // At full current whenever it charged: what the cap kept it from.
    const atFull = average(QUARTER.fromMs, QUARTER.toMs, 0, (p) => p.otherKw + (p.chargingKw > 0 ? (MAX_A * VOLTAGE_V) / 1000 : 0));
    // The quarter-hour before, from the recorded 2.351 kW at the replay's start on.
    // The quarter-hour the replay started in: the recorded 2.351 kW up to the start, the file's 0.4 kW (no car yet) up to the first point.
    const firstFromMs = Date.parse('2025-05-11T06:00:00Z');
    const firstToMs = firstFromMs + QUARTER_MS;
    const beforeSeriesMs = Math.min(series[0]!.atMs, firstToMs);
    const prior = (RECORDED_AVERAGE_KW * (Date.parse(START) - firstFromMs)) / 3_600_000 + (0.4 * (beforeSeriesMs - Date.parse(START))) / 3_600_000;
    const first = average(firstFromMs, firstToMs, prior, (p) => p.otherKw + p.chargingKw);
    console.log(JSON.stringify({ first_kw: round3(first), quarter_kw: round3(whole), charging_kw: round3(charged), at_full_kw: round3(atFull), points: series.length, samples: samples.length }));

    expect(charged, 'the car charged in the quarter-hour').toBeGreaterThan(0.5);
    expect(atFull, 'full-current charging would have set a new peak').toBeGreaterThan(MONTH_PEAK_KW + 0.3);
    expect(whole).toBeLessThanOrEqual(MONTH_PEAK_KW + 0.02);
    expect(first).toBeLessThanOrEqual(MONTH_PEAK_KW + 0.02);
    // It stopped while the rest of the site alone left it less than its minimum current (minutes 5-9, after the gateway's reaction).
    const duringStep = series.filter((p) => p.atMs >= QUARTER.fromMs + 360_000 && p.atMs < QUARTER.fromMs + 540_000);
    expect(duringStep.length).toBeGreaterThan(10);
    expect(duringStep.every((p) => p.chargingKw === 0)).toBe(true);
    // The meter agrees: its month's peak (1-0:1.6.0) is still the recorded one, and its running average near the end matches the reference.
    const last = demands.at(-1)!.demand;
    expect(last.monthPeak?.kw).toBe(MONTH_PEAK_KW);
    const nearEnd = demands.filter((d) => d.atMs < QUARTER.toMs && d.atMs >= QUARTER.toMs - 60_000).at(-1);
    expect(nearEnd, 'a telegram in the last minute of the quarter-hour').toBeDefined();
    expect(nearEnd!.demand.quarterHourAverageKw!).toBeCloseTo(average(QUARTER.fromMs, nearEnd!.atMs, 0, (p) => p.otherKw + p.chargingKw), 1);

    // /metrics and /status.json show the meter's capacity objects (not the MQTT measurement).
    const metrics = await (await fetch(`http://127.0.0.1:${gw.httpPort}/metrics`)).text();
    expect(metrics).toContain(`metergate_p1_month_peak_kw{resource_id="${SITE_METER}"} ${MONTH_PEAK_KW}`);
    expect(metrics).toMatch(new RegExp(`metergate_p1_quarter_hour_average_demand_kw\\{resource_id="${SITE_METER}"\\} \\d`));
    expect(metrics).toContain(`metergate_p1_month_peak_timestamp_seconds{resource_id="${SITE_METER}"} ${Date.parse('2020-05-09T11:45:58Z') / 1000}`);
    for (const [month, kw] of [['2020-04', 3.695], ['2020-03', 5.98], ['2020-02', 4.318]] as const) expect(metrics).toContain(`metergate_p1_past_month_peak_kw{resource_id="${SITE_METER}",month="${month}"} ${kw}`);
    const status = (await (await fetch(`http://127.0.0.1:${gw.httpPort}/status.json`)).json()) as any;
    const meter = status.meters.find((m: any) => m.resource_id === SITE_METER);
    expect(meter.demand.month_peak).toEqual({ kw: MONTH_PEAK_KW, at: '2020-05-09T11:45:58.000Z' });
    expect(meter.demand.history.map((h: any) => h.month)).toEqual(['2020-04', '2020-03', '2020-02']);
    expect(meter.metrics.map((m: any) => m.name).filter((n: string) => /demand|peak/.test(n))).toEqual([]);

    // The plan says the cap binds, and what meeting the departure would cost (not applied).
    const res = await fetch(`http://127.0.0.1:${gw.httpPort}/api/v1/chargers/CP-BE/connectors/1/plan`, { headers: { authorization: `Token ${gw.cpoToken}` } });
    const plan = (await res.json()) as any;
    expectDocumented('GET', PLAN_PATH, res, plan);
    expect(plan.meets_target).toBe(false);
    expect(plan.capacity).toMatchObject({ state: 'measured', month_peak_kw: MONTH_PEAK_KW, cap_kw: MONTH_PEAK_KW, binding: true });
    expect(plan.capacity.new_peak).toMatchObject({ applied: false });
    expect(plan.capacity.new_peak.cost).toBeCloseTo(plan.capacity.new_peak.raise_kw * 3.37, 3);
    expect(plan.capacity.total_cost_expected).toBeCloseTo(plan.planned.cost.expected, 6);
  });
});

const round3 = (v: number) => Math.round(v * 1000) / 1000;
