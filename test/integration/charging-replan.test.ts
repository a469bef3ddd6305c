// Replanning when prices arrive, as the daemon wires it (buildModules): a target set over
// real HTTP while the next day's real NL prices are not stored yet cannot be met (prices
// end before departure); once the prices are stored and prices.updated is emitted, as the
// price sync does, plan.updated carries a plan that meets it, and GET answers the same.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildModules } from '../../src/daemon.js';
import type { Events } from '../../src/events.js';
import type { Module } from '../../src/lifecycle.js';
import { requireMarket } from '../../src/prices/markets.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';
import { PriceStore } from '../../src/store/prices.js';
import { storePrices } from '../../src/prices/price-merge.js';
import type { PricePeriod } from '../../src/domain.js';
import { hasSharedData, sharedData, SKIP_REASON } from '../helpers/shared-data.js';
import { rawRequest, startTestHttp, type TestHttp } from '../helpers/http.js';

const at = (iso: string) => Date.parse(iso);

describe.skipIf(!hasSharedData)(`charging plans are made again when prices arrive${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let http: TestHttp;
  let replanner: Module;
  let native: PricePeriod[];
  const nowMs = at('2025-11-12T12:00:00Z');
  // Day-ahead prices for the 13th are published around 12:00Z on the 12th.
  const publishedUntilMs = at('2025-11-12T23:00:00Z');

  beforeAll(async () => {
    http = await startTestHttp({ config: { prices: { regions: ['NL'], source: 'none' }, chargers: [{ id: 'CP-9', password: 'charger-secret-0123456789', auth: 'accept_all', connectors: [{ connector_id: 1 }] }] }, ctx: { clock: { now: () => nowMs } } });
    native = parsePriceCsv(readFileSync(sharedData('prices/nl-2025-quarterhour-local-utc.csv'), 'utf8'), requireMarket('NL')).periods;
    storePrices(new PriceStore(http.ctx.db), native.filter((p) => p.startMs < publishedUntilMs), { source: 'csv:nl-2025-quarterhour-local-utc.csv', fetchedAtMs: 0 });
    replanner = buildModules(http.ctx).find((m) => m.name === 'charging-plans')!;
    await replanner.start();
  });
  afterAll(async () => {
    await replanner?.stop();
    await http?.close();
  });

  it('emits plan.updated with the new plan after prices.updated', async () => {
    const cpo = http.token('cpo');
    const put = await rawRequest(`${http.url}/api/v1/chargers/CP-9/connectors/1/plan`, {
      method: 'PUT',
      headers: { authorization: `Token ${cpo}`, 'content-type': 'application/json' },
      body: JSON.stringify({ departure_time: '2025-11-13T07:00:00Z', energy_wh: 150_000 }),
    });
    const before = (await put.json()) as Record<string, any>;
    expect(before).toMatchObject({ meets_target: false, shortfall_reason: 'prices-end-before-departure' });

    const heard: Array<Events['plan.updated']> = [];
    const off = http.ctx.events.on('plan.updated', (e) => heard.push(e));
    const tomorrow = native.filter((p) => p.startMs >= publishedUntilMs && p.startMs < publishedUntilMs + 86_400_000);
    storePrices(new PriceStore(http.ctx.db), tomorrow, { source: 'entsoe', fetchedAtMs: nowMs });
    http.ctx.events.emit('prices.updated', { marketArea: 'NL', fromMs: publishedUntilMs, toMs: publishedUntilMs + 86_400_000, periods: tomorrow.length });
    off();

    expect(heard).toHaveLength(1);
    expect(heard[0]).toMatchObject({ chargePointId: 'CP-9', connectorId: 1, marketArea: 'NL', reason: 'prices-updated', plannedAtMs: nowMs });
    expect(heard[0].plan.meetsTarget).toBe(true);
    expect(heard[0].plan.planned.slots.some((s) => s.startMs >= publishedUntilMs)).toBe(true);
    const got = await rawRequest(`${http.url}/api/v1/chargers/CP-9/connectors/1/plan`, { method: 'GET', headers: { authorization: `Token ${cpo}` } });
    const after = (await got.json()) as Record<string, any>;
    expect(after.meets_target).toBe(true);
    expect(after.planned.cost.expected).toBeCloseTo(heard[0].plan.planned.cost.expected, 3);
  });
});
