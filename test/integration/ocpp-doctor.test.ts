// metergate doctor's charger lines, read from the gateway's real SQLite file as the
// central system wrote it (store/ocpp.ts): heard recently, never heard, a transaction
// open for days.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { chargersCheck } from '../../src/ops/doctor/chargers.js';
import { runDoctor } from '../../src/ops/doctor/run.js';
import { databasePath, openDaemonDatabase } from '../../src/store/db.js';
import { ChargerSessions } from '../../src/ocpp/charger-sessions.js';

describe('doctor: chargers', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mg-doctor-ocpp-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('passes a charger heard lately, warns with the wiring for one never heard and for a transaction open for days', async () => {
    const now = Date.parse('2026-01-10T12:00:00Z');
    const configPath = join(dir, 'config.yaml');
    writeFileSync(
      configPath,
      [
        'organization_id: 3f2504e0-4f89-41d3-9a0c-0305e82c3301',
        `data_dir: ${dir}`,
        'ocpp: { port: 8887 }',
        'chargers:',
        '  - { id: CP-HEARD, password: 0123456789abcdef, auth: accept_all }',
        '  - { id: CP-SILENT, password: 0123456789abcdef, auth: accept_all }',
        '',
      ].join('\n'),
    );
    const before = await runDoctor({ configPath, checks: [chargersCheck], now: () => now });
    expect(before.map((r) => [r.check, r.status])).toEqual([
      ['charger CP-HEARD', 'warn'],
      ['charger CP-SILENT', 'warn'],
    ]);

    const db = openDaemonDatabase(databasePath(dir));
    const store = new ChargerSessions(db, { marketArea: 'NL' });
    store.store.recordHeartbeat('CP-HEARD', now - 120_000);
    store.startTransaction({ chargePointId: 'CP-HEARD', connectorId: 1, idTag: 'T', meterStartWh: 0, startedAtMs: now - 3 * 86_400_000, reservationId: null, idTagStatus: 'Accepted' }, now - 3 * 86_400_000);
    db.close();

    const results = await runDoctor({ configPath, checks: [chargersCheck], now: () => now });
    expect(results.map((r) => [r.check, r.status])).toEqual([
      ['charger CP-HEARD', 'pass'],
      ['charger CP-HEARD tx', 'warn'],
      ['charger CP-SILENT', 'warn'],
    ]);
    expect(results[0].detail).toBe('heard 120 s ago');
    expect(results[1].detail).toContain('1 transaction(s) open for more than a day (oldest started 2026-01-07T12:00:00.000Z)');
    expect(results[2].detail).toBe('never heard at ws://<gateway address>:8887/CP-SILENT');
    expect(results[2].fix).toContain('ws://<gateway address>:8887/');
  });
});
