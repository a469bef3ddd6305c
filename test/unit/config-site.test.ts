// The `site` settings: defaults, and a site meter that must be a configured meter.
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import { CONFIG_BASE as BASE, configProblems as problemsOf } from '../helpers/config-problems.js';

const METER = '0b6f2a4e-1c3d-4e5f-8a9b-0c1d2e3f4a5b';
const WITH_METER = { buses: [{ name: 'rs485', type: 'rtu', port: '/dev/ttyUSB0' }], meters: [{ resource_id: METER, bus: 'rs485', unit_id: 1, profile: 'sdm630' }] };

describe('site settings', () => {
  it('defaults: no limit, no meter; a meter is taken to measure the chargers too, stale after 60 s; raised again after 5 minutes by 2 A or more; a lowering escalates 20 s after it was demanded, one means per 10 s', () => {
    expect(validateConfig(BASE, 'test', {}).site).toEqual({ meter_includes_chargers: true, max_reading_age_s: 60, raise_interval_s: 300, raise_hysteresis_a: 2, voltage_v: 230, lower_deadline_s: 20, escalation_step_s: 10, uncounted_chargers: 'refuse' });
    expect(validateConfig({ ...BASE, ...WITH_METER, site: { meter: METER, limit_a: 25 } }, 'test', {}).site).toMatchObject({ meter: METER, limit_a: 25 });
  });

  it('refuses a site meter that is not a configured meter, and a limit that is not positive', () => {
    expect(problemsOf({ ...WITH_METER, site: { meter: '9b6f2a4e-1c3d-4e5f-8a9b-0c1d2e3f4a5b' } })).toContain('site.meter: 9b6f2a4e-1c3d-4e5f-8a9b-0c1d2e3f4a5b is not a configured meter (meters[].resource_id)');
    expect(problemsOf({ site: { limit_a: 0 } }).join('\n')).toMatch(/site\.limit_a/);
  });

  it('accepts a raise interval under 5 s and a hysteresis under 0.5 A, as configs written before their floor did (the site follower takes them at the floor)', () => {
    expect(problemsOf({ site: { limit_a: 25, raise_interval_s: 0, raise_hysteresis_a: 0 } })).toEqual([]);
    expect(validateConfig({ ...BASE, site: { limit_a: 25, raise_interval_s: 0, raise_hysteresis_a: 0 } }, 'test', {}).site).toMatchObject({ raise_interval_s: 0, raise_hysteresis_a: 0 });
    expect(problemsOf({ site: { limit_a: 25, raise_interval_s: -1 } }).join('\n')).toMatch(/site\.raise_interval_s/);
  });

  it('refuses site.limit_a as a ceiling it cannot be: no site meter that measures the chargers and a charger without its connectors listed; accepted with uncounted_chargers: allow', () => {
    const chargers = [{ id: 'CP-1', password: 'charger-secret-0123456789', auth: 'accept_all' }];
    const refused = () => validateConfig({ ...BASE, site: { limit_a: 25 }, chargers }, 'test', {});
    expect(refused).toThrow(expect.objectContaining({ problems: [expect.stringMatching(/^chargers\[0\]\.connectors: charger CP-1 lists no connectors, and there is no site meter .*site\.uncounted_chargers: allow/)] }));
    expect(() => validateConfig({ ...BASE, ...WITH_METER, site: { meter: METER, limit_a: 25, meter_includes_chargers: false }, chargers }, 'test', {})).toThrow(expect.objectContaining({ problems: [expect.stringMatching(/the site meter does not measure the chargers/)] }));
    // Each of the fixes named.
    expect(validateConfig({ ...BASE, site: { limit_a: 25, uncounted_chargers: 'allow' }, chargers }, 'test', {}).site.uncounted_chargers).toBe('allow');
    expect(validateConfig({ ...BASE, ...WITH_METER, site: { meter: METER, limit_a: 25 }, chargers }, 'test', {}).site.limit_a).toBe(25);
    expect(validateConfig({ ...BASE, site: { limit_a: 25 }, chargers: [{ ...chargers[0], connectors: [{ connector_id: 1 }] }] }, 'test', {}).site.limit_a).toBe(25);
  });

  it('site.capacity (the Belgian capacity tariff): needs the tariff, a site meter on a P1 bus and site.limit_a; defaults margin 0.2 kW and a new peak for a departure', () => {
    const P1 = { buses: [{ name: 'p1', type: 'p1', port: '/dev/ttyUSB1' }], meters: [{ resource_id: METER, bus: 'p1' }] };
    expect(validateConfig({ ...BASE, ...P1, site: { meter: METER, limit_a: 25, capacity: { eur_per_kw_month: 3.37 } } }, 'test', {}).site.capacity).toEqual({ eur_per_kw_month: 3.37, margin_kw: 0.2, raise_peak_for_departure: true });
    expect(problemsOf({ ...P1, site: { meter: METER, limit_a: 25, capacity: {} } }).join('\n')).toMatch(/eur_per_kw_month/);
    expect(problemsOf({ ...WITH_METER, site: { meter: METER, limit_a: 25, capacity: { eur_per_kw_month: 3.37 } } }).join('\n')).toMatch(/site\.capacity: the site meter .* is on bus rs485 \(rtu\), not a P1 bus/);
    expect(problemsOf({ site: { limit_a: 25, capacity: { eur_per_kw_month: 3.37 } } })).toContain('site.capacity: needs site.meter, the Belgian P1 meter whose 1-0:1.4.0 and 1-0:1.6.0 it follows');
    expect(problemsOf({ ...P1, site: { meter: METER, capacity: { eur_per_kw_month: 3.37 } } }).join('\n')).toMatch(/site\.capacity: needs site\.limit_a/);
  });
});
