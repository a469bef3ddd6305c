// A mixed fleet on one `metergate run` (issue 33): 25 chargers speaking OCPP 1.6 (strict
// ocpp-rpc) and 25 stations speaking OCPP 2.0.1 (ocpp-ws-io, every frame the gateway sends
// checked against the official 2.0.1 schemas) at once on the same port, each booting,
// reporting its status, sending Heartbeats and charging a session with meter values
// (test/helpers/mixed-fleet.ts). Asserted: no call failed, every session is stored and
// priced, and the two versions' twin sessions (the same readings at the same instants) are
// priced identically. Latencies are printed, never asserted: their figures are
// scripts/bench/ocpp-mixed-fleet.ts's, longer and on the compiled gateway.
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/free-port.js';
import { databasePath } from '../../src/store/db.js';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { fleetCdr, percentile, prepareFleetGateway, runFleet, TRANSACTION_KINDS, type FleetGateway } from '../helpers/mixed-fleet.js';
import { hasSharedData, SKIP_REASON } from '../helpers/shared-data.js';

const PER_VERSION = 25;

describe.skipIf(!hasSharedData)(`a mixed fleet: ${PER_VERSION} OCPP 1.6 chargers and ${PER_VERSION} OCPP 2.0.1 stations on one gateway${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'mg-mixed-fleet-'));
  let gw: FleetGateway;
  let daemon: DaemonProcess;

  beforeAll(async () => {
    gw = prepareFleetGateway(dir, { perVersion: PER_VERSION, ocppPort: await freePort(), httpPort: await freePort() });
    daemon = await startDaemon(gw.configPath, { startTimeoutMs: 60_000 });
  }, 90_000);

  afterAll(async () => {
    await daemon?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('boots, statuses, heartbeats and a session each at once: nothing fails, every session stored and priced, 1.6 and 2.0.1 twins priced identically', { timeout: 60_000 }, async () => {
    const r = await runFleet(gw, { transactions: 1, meterValues: 3, stepMs: 250 });
    expect(r.errors).toEqual([]);
    expect(r.violations).toEqual([]);
    expect(r.sessions).toHaveLength(2 * PER_VERSION);
    for (const v of ['1.6', '2.0.1'] as const) {
      const tx = TRANSACTION_KINDS.flatMap((k) => r.latencyMs[v][k]);
      console.log(`${v}: ${r.latencyMs[v].heartbeat.length} Heartbeats p95 ${percentile(r.latencyMs[v].heartbeat, 95).toFixed(1)} ms, ${tx.length} transaction messages p95 ${percentile(tx, 95).toFixed(1)} ms (printed, not asserted)`);
      expect(r.latencyMs[v].boot).toHaveLength(PER_VERSION);
      expect(tx).toHaveLength(PER_VERSION * (3 + 2));
    }

    // Stored: every transaction closed by its own stop, with the readings sent.
    const db = new Database(databasePath(gw.dataDir), { readonly: true });
    try {
      const stored = db.prepare<[number], { meter_start_wh: number; meter_stop_wh: number | null; stop_inferred: string | null }>('SELECT meter_start_wh, meter_stop_wh, stop_inferred FROM ocpp_transactions WHERE transaction_id = ?');
      for (const s of r.sessions) {
        expect(s.transactionId, `${s.chargePointId}: its transaction`).not.toBeNull();
        expect(stored.get(s.transactionId!), s.chargePointId).toEqual({ meter_start_wh: s.readings[0]![1], meter_stop_wh: s.readings.at(-1)![1], stop_inferred: null });
      }
    } finally {
      db.close();
    }

    // Priced: each cdr with its energy, and the twin sessions of the two versions at the same price.
    const cdrs = await Promise.all(r.sessions.map(async (s) => ({ s, cdr: await fleetCdr(gw, s) })));
    for (const { s, cdr } of cdrs) {
      expect(cdr.status, s.chargePointId).toBe(200);
      expect(cdr.body.total_energy, s.chargePointId).toBeCloseTo((s.readings.at(-1)![1] - s.readings[0]![1]) / 1000, 6);
      expect(Number.isFinite(cdr.body.total_cost?.excl_vat), s.chargePointId).toBe(true);
    }
    for (const { s, cdr } of cdrs.filter((c) => c.s.version === '1.6')) {
      const twin = cdrs.find((c) => c.s.version === '2.0.1' && c.s.pair === s.pair && c.s.index === s.index)!;
      expect({ cost: twin.cdr.body.total_cost, start: twin.cdr.body.start_date_time, end: twin.cdr.body.end_date_time }, `${twin.s.chargePointId} priced as ${s.chargePointId}`).toEqual({ cost: cdr.body.total_cost, start: cdr.body.start_date_time, end: cdr.body.end_date_time });
    }
  });
});
