// doctor's fuse check and a charger pinned to OCPP 2.0.1 under a site limit: the fuse
// controller limits its EVSEs as 1.6 connectors (docs/chargers.md "OCPP 2.0.1"), so the
// version alone is no problem to name (before, it was warned as never limited). No daemon
// runs here (its status is not reachable: config only).
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import { fuseCheck } from '../../src/ops/doctor/fuse.js';
import { freePort } from '../../src/free-port.js';

const charger = (id: string, version: string) => ({ id, password: 'doctor-fuse-key-0123456789', ocpp_version: version, auth: 'accept_all', connectors: [{ connector_id: 1, max_current_a: 16 }] });

describe('doctor fuse check and OCPP 2.0.1', () => {
  it('names neither a charger pinned to 2.0.1 nor a 1.6 one under site.limit_a: both are controlled', async () => {
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
    expect(results.filter((r) => r.check.includes('CS-NEW') || r.check.includes('CP-OLD'))).toEqual([]);
    expect(results.filter((r) => r.status !== 'pass')).toEqual([]);
  });
});
