// Signed values on a real SQLite file through the central system's code (ChargerSessions):
// an end that arrives in MeterValues after the StopTransaction, within the late-value
// cut-off, completes the session (incomplete -> verified) and moves its cdr's
// last_updated; one after the cut-off is kept but not carried; a result is taken again
// only while nothing it was computed from changed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ChargerSessions } from '../../src/ocpp/charger-sessions.js';
import { transactionSignedData } from '../../src/signed-meter/transaction-signed-data.js';
import type { ChargerConfig } from '../../src/config/types.js';
import { databasePath, openDatabase } from '../../src/store/db.js';
import { meterKey, payload, signOcmf } from '../helpers/ocmf.js';

const dir = mkdtempSync(join(tmpdir(), 'mg-signed-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('signed values kept with their transaction', () => {
  it('a late end within the cut-off completes the session and moves last_updated; after it, kept but not carried', () => {
    const db = openDatabase(databasePath(dir));
    const key = meterKey();
    const chargers = [{ id: 'CP', auth: 'accept_all', security_profile: 1, meter_public_key: key.publicKeyHex } as ChargerConfig];
    const sessions = new ChargerSessions(db, { marketArea: 'NL', lateValuesMs: 600_000 });
    const t0 = Date.parse('2025-10-01T08:00:00Z');
    const t1 = t0 + 3_600_000;
    const { transaction } = sessions.startTransaction({ chargePointId: 'CP', connectorId: 1, idTag: 'T', meterStartWh: 1000, startedAtMs: t0, reservationId: null, idTagStatus: 'Accepted' }, t0);
    const id = transaction.transactionId;
    const begin = signOcmf(payload('M1', 1, [{ atMs: t0, tx: 'B', wh: 1000 }]), key);
    const end = signOcmf(payload('M1', 2, [{ atMs: t1, tx: 'E', wh: 5000 }]), key);
    sessions.addMeterValues('CP', 1, id, [], t0, [{ sampledAtMs: t0, context: 'Transaction.Begin', measurand: 'Energy.Active.Import.Register', value: begin }]);
    sessions.stopTransaction({ chargePointId: 'CP', transactionId: id, meterStopWh: 5000, stoppedAtMs: t1, reason: null, idTag: null }, [], t1);
    const first = transactionSignedData(sessions.store, sessions.signed, chargers, id)!;
    expect(first.verification.outcome).toBe('incomplete');
    expect(transactionSignedData(sessions.store, sessions.signed, chargers, id, first)).toBe(first);
    const updatedBefore = sessions.sessions.get(`ocpp:CP:${id}`)!.lastUpdatedMs;

    // The end in a MeterValues 5 minutes after the stop: carried, the cdr changed.
    sessions.addMeterValues('CP', 1, id, [], t1 + 300_000, [{ sampledAtMs: t1, context: 'Transaction.End', measurand: 'Energy.Active.Import.Register', value: end }]);
    const second = transactionSignedData(sessions.store, sessions.signed, chargers, id, first)!;
    expect(second).not.toBe(first);
    expect(second.verification.outcome).toBe('verified');
    expect(sessions.sessions.get(`ocpp:CP:${id}`)!.lastUpdatedMs).toBeGreaterThan(updatedBefore);

    // Another document after the cut-off: kept, not carried, the cdr as it was.
    const late = signOcmf(payload('M1', 3, [{ atMs: t1 + 60_000, tx: 'C', wh: 5000 }]), key);
    sessions.addMeterValues('CP', 1, id, [], t1 + 3_600_000, [{ sampledAtMs: t1 + 60_000, context: 'Sample.Periodic', measurand: 'Energy.Active.Import.Register', value: late }]);
    expect(db.prepare('SELECT count(*) FROM ocpp_signed_values WHERE transaction_id = ?').pluck().get(id)).toBe(3);
    expect(transactionSignedData(sessions.store, sessions.signed, chargers, id, second)).toBe(second);
    db.close();
  });
});
