// The exogenous-source seam: a second provider is one registration; the registry builds the
// providers the configuration turns on, in registration order, and refuses a kind twice.
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/log.js';
import { EntsoeExogenousSource } from '../../src/prices/exogenous/entsoe.js';
import { exogenousProviderTypes } from '../../src/prices/exogenous/index.js';
import type { ExogenousSource } from '../../src/prices/exogenous/registry.js';

const ORG = '6f1c2b7e-3a4d-4e5f-8a9b-0c1d2e3f4a5b';
const logger = createLogger('silent' as 'info');
const config = (prices: Record<string, unknown>) => validateConfig({ organization_id: ORG, data_dir: '/tmp/mg-exo-registry', prices: { regions: ['NL'], ...prices } }, 'test', {});

describe('exogenous provider registry', () => {
  it('builds the ENTSO-E provider when the ENTSO-E price source has a token, and another registered provider after it', () => {
    const registry = exogenousProviderTypes();
    // A weather service for days 2-7 would register like this (its file would hold the class).
    const weather: ExogenousSource = { name: 'weather-test', series: ['solar'], fetchDayAhead: async () => ({ periods: [], requests: 0, noDataChunks: 0 }) };
    registry.register({ kind: 'weather', create: ({ config: c }) => (c.prices.regions.includes('NL') ? weather : null) });
    expect(registry.kinds()).toEqual(['entsoe', 'weather']);
    const on = registry.build({ config: config({ entsoe: { security_token: 'registry-token-1' } }), logger });
    expect(on.map((s) => s.name)).toEqual(['entsoe-exogenous', 'weather-test']);
    expect(on[0]).toBeInstanceOf(EntsoeExogenousSource);
    // The day-ahead series, and the week-ahead load forecast's daily minimum and maximum (A65 processType A31).
    expect(on[0].series).toEqual(['load', 'solar', 'wind_onshore', 'wind_offshore', 'load_week_ahead_min', 'load_week_ahead_max']);
    expect(registry.build({ config: config({ source: 'none' }), logger }).map((s) => s.name)).toEqual(['weather-test']);
    expect(() => registry.register({ kind: 'weather', create: () => null })).toThrow(/registered twice/);
  });
});
