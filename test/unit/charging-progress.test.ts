// The delivered energy the planner and the plan follower count (src/ocpp/connector-delivery.ts:
// the register rule over the values src/store/connector-registers.ts reads), on a real SQLite
// file filled through the OCPP store as MeterValues fill it: reading only the register values
// around the instants asked about gives the same energy as the whole session's readings
// (registerReadings over every value), for a long session with per-phase-only instants and
// values measured at the EV, which are not the connector's.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerReadings } from '../../src/ocpp/register-readings.js';
import { registerAtWh } from '../../src/planning/progress.js';
import { ConnectorDelivery } from '../../src/ocpp/connector-delivery.js';
import { ConnectorRegisterStore } from '../../src/store/connector-registers.js';
import { openDatabase, type Db } from '../../src/store/db.js';
import { ChargerSessions } from '../../src/ocpp/charger-sessions.js';
import type { SampledValueRow } from '../../src/store/ocpp.js';

const START_MS = Date.parse('2025-11-12T18:00:00Z');
const METER_START_WH = 120_000;

describe('ConnectorDelivery', () => {
  let dir: string;
  let db: Db;
  const all: SampledValueRow[] = [];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'mg-progress-'));
    db = openDatabase(join(dir, 'metergate.db'));
    const ocpp = new ChargerSessions(db, { marketArea: 'NL' });
    const { transaction } = ocpp.startTransaction({ chargePointId: 'CP', connectorId: 1, idTag: 'T', meterStartWh: METER_START_WH, startedAtMs: START_MS, reservationId: null, idTagStatus: 'Accepted' }, START_MS);
    // Ten hours, a value every 60 s: 7.4 kW for the first four hours, nothing for two, 3.7 kW after.
    let wh = METER_START_WH;
    for (let i = 1; i <= 600; i++) {
      const atMs = START_MS + i * 60_000;
      wh += i <= 240 ? 7400 / 60 : i <= 360 ? 0 : 3700 / 60;
      const rows: SampledValueRow[] =
        i % 7 === 0
          ? // Some instants only per phase (summed), some with a value at the EV (not the connector's).
            [1, 2, 3].map((l) => ({ sampledAtMs: atMs, measurand: 'Energy.Active.Import.Register', phase: `L${l}`, location: '', context: 'Sample.Periodic', value: wh / 3, unit: 'Wh' }))
          : i % 11 === 0
            ? [{ sampledAtMs: atMs, measurand: 'Energy.Active.Import.Register', phase: '', location: 'EV', context: 'Sample.Periodic', value: 1, unit: 'kWh' }]
            : [{ sampledAtMs: atMs, measurand: 'Energy.Active.Import.Register', phase: '', location: 'Outlet', context: 'Sample.Periodic', value: wh / 1000, unit: 'kWh' }];
      all.push(...rows);
      ocpp.addMeterValues('CP', 1, transaction.transactionId, rows, atMs);
    }
  });

  afterAll(() => {
    db?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const whole = () =>
    registerReadings({ startedAtMs: START_MS, meterStartWh: METER_START_WH, stoppedAtMs: null, meterStopWh: null }, all).map((r) => ({ atMs: r.timestampMs, wh: r.energyKwh * 1000 }));

  it('reads the same delivered energy and register values as the whole session, at any instant', () => {
    const store = new ConnectorDelivery(new ConnectorRegisterStore(db));
    const reference = whole();
    const newest = reference[reference.length - 1]!;
    for (const sinceMin of [-30, 0, 1, 77, 121, 300, 361, 598, 600, 700]) {
      const sinceMs = START_MS + sinceMin * 60_000;
      const aroundMs = START_MS + (sinceMin + 133) * 60_000 + 17_000;
      const d = store.delivery('CP', 1, sinceMs, [aroundMs])!;
      expect(d.measuredAtMs).toBe(newest.atMs);
      const expected = newest.wh - registerAtWh(reference, Math.max(sinceMs, START_MS))!;
      expect(d.deliveredWh, `since +${sinceMin} min`).toBeCloseTo(Math.max(0, expected), 6);
      expect(registerAtWh(d.readings, aroundMs), `at +${sinceMin + 133} min`).toBeCloseTo(registerAtWh(reference, aroundMs)!, 6);
    }
    // 4 h at 7.4 kW and 4 h at 3.7 kW: 44.4 kW h.
    expect(store.delivery('CP', 1, 0)!.deliveredWh).toBeCloseTo(44_400, 3);
    // And it reads a few dozen values, not the session's 600 instants.
    expect(store.delivery('CP', 1, START_MS + 60 * 60_000, [START_MS + 300 * 60_000])!.readings.length).toBeLessThan(30);
  });

  it('is null without an open transaction on the connector', () => {
    expect(new ConnectorDelivery(new ConnectorRegisterStore(db)).delivery('CP', 2, 0)).toBeNull();
  });
});
