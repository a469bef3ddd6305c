// An HTTP request that must write while another process holds the database's write lock
// (a long `metergate prices import`, an operator's sqlite3) gets 503 problem+json with
// Retry-After (the daemon waits at most 250 ms for a lock: no 5 s stall of the event loop),
// not a 500; once the lock goes, the same request succeeds.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest, startTestHttp, type TestHttp } from '../helpers/http.js';

describe('HTTP write while another process holds the database lock', () => {
  let http: TestHttp;
  let cpo: string;
  beforeAll(async () => {
    http = await startTestHttp();
    cpo = http.token('cpo');
  });
  afterAll(async () => {
    await http?.close();
  });

  const put = () =>
    rawRequest(`${http.url}/api/v1/sessions/TX-LOCKED`, {
      method: 'PUT',
      headers: { authorization: `Token ${cpo}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        power_market: { market_area_code: 'NL', sub_modality: 'DayAhead' },
        status: 'active',
        start_date_time: '2025-09-30T21:30:00Z',
        meter_readings: [{ reading_kwh: 0, timestamp: '2025-09-30T21:30:00Z' }],
      }),
    });

  it('answers 503 with Retry-After while locked, then stores the session', async () => {
    const other = new Database(join(http.ctx.config.data_dir, 'metergate.db'));
    try {
      other.exec('BEGIN IMMEDIATE');
      const locked = await put();
      expect(locked.status).toBe(503);
      expect(locked.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(locked.headers.get('retry-after')).toBe('1');
      expect(((await locked.json()) as { detail: string }).detail).toMatch(/SQLITE_BUSY/);
      other.exec('COMMIT');
    } finally {
      other.close();
    }
    expect((await put()).status).toBe(201);
  });
});
