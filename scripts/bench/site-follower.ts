// Benchmark: what one site meter reading costs the site follower (src/ocpp/site-follower.ts)
// with N connectors charging on the site — for each, its plan made again under its share
// of the site (the stores read: prices, targets, open transactions, every sharing
// connector's draw) and compared with its TxProfile in force — against a baseline measured
// in the same run: one connector's plan as GET …/plan makes it (TargetPlanner.plan, the
// same stores, no sharing). Real NL prices of 2025-05-11 (../shared/data), departures in the
// evening, a real SQLite file in a temporary directory. The meter is read every poll
// (1 s or more), so the time per reading is the CPU the site follower takes per poll.
// Run: npx tsx scripts/bench/site-follower.ts [runs]   (needs ../shared/data)
import { Registry } from 'prom-client';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { AppContext } from '../../src/context.js';
import { EventBus } from '../../src/events.js';
import { createLogger } from '../../src/log.js';
import { chargingProfileRequest } from '../../src/ocpp/charging-profile.js';
import { FuseController } from '../../src/ocpp/fuse-controller.js';
import { buildChargingServices } from '../../src/planning/charging-services.js';
import { siteContext } from '../../src/planning/site-context.js';
import { openChargingStores } from '../../src/planning/charging-stores.js';
import { TargetPlanner } from '../../src/planning/target-plan.js';
import { requireMarket } from '../../src/prices/markets.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';
import { ChargingProfileStore } from '../../src/store/charging-profiles.js';
import { ChargingTargetStore, type ChargingTarget } from '../../src/store/charging-targets.js';
import { openDatabase } from '../../src/store/db.js';
import { ChargerSessions } from '../../src/ocpp/charger-sessions.js';
import { PriceStore } from '../../src/store/prices.js';
import { storePrices } from '../../src/prices/price-merge.js';

const runs = Number(process.argv[2] ?? 300);
const NOW = Date.parse('2025-05-11T06:20:00Z');
const file = resolve(process.cwd(), '../shared/data/prices/nl-2025-quarterhour-local-utc.csv');
const prices = parsePriceCsv(readFileSync(file, 'utf8'), requireMarket('NL')).periods.filter((p) => p.startMs >= NOW - 86_400_000 && p.startMs < NOW + 2 * 86_400_000);

function medianMs(fn: () => unknown): number {
  for (let i = 0; i < Math.min(30, runs); i++) fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = process.hrtime.bigint();
    fn();
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
}

function site(connectors: number): { perReadingMs: number; singlePlanMs: number; sent: number } {
  const dir = mkdtempSync(join(tmpdir(), 'mg-bench-site-'));
  const db = openDatabase(join(dir, 'metergate.db'));
  try {
    storePrices(new PriceStore(db), prices, { source: 'bench', fetchedAtMs: 0 });
    // Every connector configured (its ceilings: 16 A, 6 A minimum, three phases, 230 V).
    const chargers = Array.from({ length: connectors }, (_, i) => ({ id: `CP-${i}`, auth: 'accept_all', connectors: [{ connector_id: 1, max_current_a: 16, min_current_a: 6, phases: 3, voltage_v: 230 }] }));
    const config = { site: { limit_a: 25 + 10 * connectors, meter: 'grid', meter_includes_chargers: true, max_reading_age_s: 60, raise_interval_s: 300, raise_hysteresis_a: 2, voltage_v: 230, lower_deadline_s: 20, escalation_step_s: 10, uncounted_chargers: 'refuse' }, chargers, forecast: { enabled: false }, store: { write_queue_max_entries: 5000 } };
    const reading = { resourceId: 'grid', sampledAtMs: NOW - 1000, currentsA: [8 + 6 * connectors, 7 + 6 * connectors, 8 + 6 * connectors] as [number, number, number], powerW: null };
    const logger = createLogger('silent');
    const events = new EventBus(logger);
    let sent = 0;
    events.on('plan.updated', () => void sent++);
    const ctx = { db, clock: { now: () => NOW }, events, logger, config, probes: { siteMeter: () => reading }, metrics: new Registry() } as unknown as AppContext;
    const ocpp = new ChargerSessions(db, { marketArea: 'NL' });
    const targets = new ChargingTargetStore(db);
    const all: ChargingTarget[] = [];
    for (let i = 0; i < connectors; i++) {
      const t: ChargingTarget = { chargePointId: `CP-${i}`, connectorId: 1, marketArea: 'NL', departureMs: Date.parse('2025-05-11T17:00:00Z') + i * 600_000, energyWh: 40_000, maxCurrentA: 16, minCurrentA: 6, phases: 3, voltageV: 230, siteLimitA: null, siteOtherLoadA: null, updatedAtMs: NOW - 3_600_000 };
      targets.put(t);
      all.push(t);
      const { transaction } = ocpp.startTransaction({ chargePointId: t.chargePointId, connectorId: 1, idTag: 'T', meterStartWh: 0, startedAtMs: NOW - 3_600_000, reservationId: null, idTagStatus: 'Accepted' }, NOW - 3_600_000);
      ocpp.addMeterValues(t.chargePointId, 1, transaction.transactionId, [1, 2, 3].map((l) => ({ sampledAtMs: NOW - 5000, measurand: 'Current.Import', phase: `L${l}`, location: 'Outlet', context: 'Sample.Periodic', value: 6, unit: 'A' })), NOW - 5000);
    }
    // Every connector holds the TxProfile of its plan now: the follower compares and holds.
    const planner = new TargetPlanner(openChargingStores(db), false, siteContext(ctx));
    const profiles = new ChargingProfileStore(db);
    for (const t of all) {
      const plan = planner.plan(t, NOW);
      const transactionId = ocpp.store.chargePointView(t.chargePointId).openTransactions[0]!.transactionId;
      const request = chargingProfileRequest(plan, { connectorId: 1, transactionId, plannedAtMs: NOW, departureMs: t.departureMs });
      profiles.put({ chargePointId: t.chargePointId, connectorId: 1, purpose: 'TxProfile', transactionId, chargingProfileId: request.csChargingProfiles.chargingProfileId, plannedAtMs: NOW, sentAtMs: NOW, status: 'Accepted', error: null, periods: request.csChargingProfiles.chargingSchedule.chargingSchedulePeriod.length, requestJson: JSON.stringify(request) });
    }
    const follower = new FuseController(ctx, buildChargingServices(ctx), { sendLimit: async () => undefined, clearEscalationProfile: async () => undefined }, () => true, new Registry());
    void follower.start();
    const perReadingMs = medianMs(() => follower.check());
    void follower.stop();
    // Baseline: one plan of one connector alone on the site (GET …/plan).
    const alone = new TargetPlanner(openChargingStores(db), false, { ...siteContext(ctx), limitA: 25, meter: null });
    const singlePlanMs = medianMs(() => alone.plan(all[0]!, NOW));
    return { perReadingMs, singlePlanMs, sent };
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(`site follower: one site meter reading, ${runs} runs each, real NL prices of 2025-05-11 (${prices.length} periods stored)`);
console.log('connectors | per reading (median) | one plan alone (baseline) | ratio | profiles sent');
for (const n of [1, 2, 5, 10]) {
  const r = site(n);
  console.log(`${String(n).padStart(10)} | ${r.perReadingMs.toFixed(3).padStart(17)} ms | ${r.singlePlanMs.toFixed(3).padStart(22)} ms | ${(r.perReadingMs / r.singlePlanMs).toFixed(1).padStart(5)} | ${r.sent}`);
}
