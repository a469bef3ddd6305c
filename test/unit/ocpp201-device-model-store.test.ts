// The 2.0.1 device model store on a real (in-memory) SQLite with the migrations
// (store/ocpp201-device-model.ts): a report's parts counted once, completion, later values
// replacing earlier ones, and the bounds per station (rows, reports) a station cannot pass.
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/db.js';
import { DeviceModelStore, MAX_DEVICE_MODEL_ROWS, MAX_REPORTS_PER_STATION } from '../../src/store/ocpp201-device-model.js';

const row = (variable: string, value: string, component = 'OCPPCommCtrlr') => ({
  component, componentInstance: '', evseId: 0, connectorId: 0, variable, variableInstance: '', attributeType: 'Actual',
  value, mutability: 'ReadWrite', persistent: null, constant: null, characteristicsJson: null,
});

describe('DeviceModelStore', () => {
  it('counts each part once, completes the report once every part came, and a later value replaces an earlier one', () => {
    const store = new DeviceModelStore(openDatabase(':memory:'));
    const id = store.nextRequestId('CS');
    store.requested('CS', id, 'FullInventory', 1_000);
    expect(store.storePart('CS', { requestId: id, seqNo: 1, last: true, rows: [row('B', '2')] }, 2_000).report).toMatchObject({ parts: 1, finalSeqNo: 1, completedAtMs: null });
    expect(store.storePart('CS', { requestId: id, seqNo: 1, last: true, rows: [row('B', '2')] }, 2_500).report).toMatchObject({ parts: 1, completedAtMs: null });
    expect(store.storePart('CS', { requestId: id, seqNo: 0, last: false, rows: [row('A', '1')] }, 3_000).report).toMatchObject({ parts: 2, completedAtMs: 3_000 });
    store.storePart('CS', { requestId: id + 1, seqNo: 0, last: true, rows: [row('A', '9')] }, 4_000);
    expect(store.rows('CS').map((r) => [r.variable, r.value])).toEqual([['A', '9'], ['B', '2']]);
    expect(store.actualValue('CS', 'ocppcommctrlr', 'a')).toBe('9');
    expect(store.mutability('CS', 'OCPPCommCtrlr', 'B')).toBe('ReadWrite');
  });

  it('stores at most MAX_DEVICE_MODEL_ROWS rows per station (more are counted as dropped) and keeps the newest reports, also of ids the station chose', () => {
    const store = new DeviceModelStore(openDatabase(':memory:'));
    const rows = Array.from({ length: MAX_DEVICE_MODEL_ROWS + 5 }, (_, i) => row(`V${i}`, String(i)));
    const { stored, dropped, report } = store.storePart('CS', { requestId: 7, seqNo: 0, last: true, rows }, 1_000);
    expect([stored, dropped]).toEqual([MAX_DEVICE_MODEL_ROWS, 5]);
    expect(report).toMatchObject({ rowsStored: MAX_DEVICE_MODEL_ROWS, rowsDropped: 5, reportBase: null });
    // A known row is still updated at the bound; another station has its own.
    expect(store.storePart('CS', { requestId: 8, seqNo: 0, last: true, rows: [row('V0', 'new'), row('Vx', 'x')] }, 2_000)).toMatchObject({ stored: 1, dropped: 1 });
    expect(store.storePart('OTHER', { requestId: 1, seqNo: 0, last: true, rows: [row('Vx', 'x')] }, 2_000).stored).toBe(1);
    for (let requestId = 100; requestId < 100 + 3 * MAX_REPORTS_PER_STATION; requestId++) store.storePart('CS', { requestId, seqNo: 0, last: true, rows: [] }, 3_000);
    expect(store.reports('CS')).toHaveLength(MAX_REPORTS_PER_STATION);
    // Our next request id ignores the station's own ones.
    expect(store.nextRequestId('CS')).toBe(1);
    expect(store.forgetAllBut(['OTHER'])).toBeGreaterThan(0);
    expect(store.rowCount('CS')).toBe(0);
    expect(store.rowCount('OTHER')).toBe(1);
  });
});
