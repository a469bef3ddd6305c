// doctor's fuse check names a charger pinned to OCPP 2.0.1 under a site limit: the fuse
// controller does not limit it (docs/chargers.md "OCPP 2.0.1"), so it is a warning with the
// fix, never a silent pass. No daemon runs here (its status is not reachable: config only).
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import { fuseCheck } from '../../src/ops/doctor/fuse.js';
import { freePort } from '../../src/free-port.js';

const charger = (id: string, version: string) => ({ id, password: 'doctor-fuse-key-0123456789', ocpp_version: version, auth: 'accept_all', connectors: [{ connector_id: 1, max_current_a: 16 }] });

describe('doctor fuse check and OCPP 2.0.1', () => {
  it('warns for a charger pinned to 2.0.1 under site.limit_a, names the fix; a 1.6 one is not named', async () => {
    const port = await freePort();
    const config = validateConfig({
      organization_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
      data_dir: '/tmp/metergate-doctor-fuse-201',
      http: { host: '127.0.0.1', port },
      prices: { regions: ['NL'], source: 'none' },
      forecast: { enabled: false },
      site: { limit_a: 25 },
      chargers: [charger('CS-NEW', '2.0.1'), charger('CP-OLD', '1.6')],
    });
    const results = await fuseCheck.run({ configPath: 'test', config, configProblems: [], now: Date.now, timeoutMs: 500, serviceUser: 'metergate', results: [] });
    const named = results.filter((r) => r.check.startsWith('fuse CS-NEW'));
    expect(named).toHaveLength(1);
    expect(named[0]).toMatchObject({ status: 'warn' });
    expect(JSON.stringify(named[0])).toMatch(/OCPP 2\.0\.1.*max_current_a/);
    expect(JSON.stringify(named[0])).toMatch(/ocpp_version: '1\.6'/);
    expect(results.some((r) => r.check.includes('CP-OLD'))).toBe(false);
  });
});
