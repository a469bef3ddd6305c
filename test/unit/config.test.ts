import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, EX_CONFIG, envOverrideNames, loadConfig, validateConfig } from '../../src/config/load.js';

const ORG = '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11';

function problemsOf(raw: unknown, env: NodeJS.ProcessEnv = {}): readonly string[] {
  try {
    validateConfig(raw, 'test', env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).exitCode).toBe(EX_CONFIG);
    return (err as ConfigError).problems;
  }
  return [];
}

describe('config validation', () => {
  it('fills defaults and freezes the result', () => {
    const config = validateConfig({ organization_id: ORG }, 'test', {});
    expect(config.poll.interval_ms).toBe(10_000);
    expect(config.http.port).toBe(8080);
    expect(config.http.host).toBe('127.0.0.1');
    expect(config.data_dir).toBe('/var/lib/metergate');
    expect(Object.isFrozen(config.poll)).toBe(true);
  });

  it('lists every problem with its path', () => {
    const problems = problemsOf({
      organization_id: 'not-a-uuid',
      buses: [{ name: 'a', type: 'rtu' }],
      meters: [{ resource_id: ORG, bus: 'a', unit_id: 300, profile: 'x' }],
      mqtt: { url: 'mqtt://broker:1883' },
      bogus: 1,
    });
    expect(problems).toContain('organization_id: must match format "uuid"');
    expect(problems).toContain('buses[0].port: is required');
    expect(problems).toContain('meters[0].unit_id: must be <= 247');
    expect(problems).toContain('mqtt.url: must start with mqtts:// (TLS is mandatory; plain mqtt:// is refused)');
    expect(problems).toContain('bogus: is not a known setting');
  });

  it('checks references between settings', () => {
    const problems = problemsOf({
      organization_id: ORG,
      buses: [{ name: 'a', type: 'tcp', host: 'localhost' }],
      meters: [
        { resource_id: ORG, bus: 'b', unit_id: 1, profile: 'nope' },
        { resource_id: ORG, bus: 'a', unit_id: 1, profile: 'nope' },
      ],
    });
    expect(problems.some((p) => p.startsWith('meters[0].bus: no bus named "b"'))).toBe(true);
    expect(problems.some((p) => p.startsWith('meters[1].resource_id:'))).toBe(true);
    expect(problems.some((p) => p.startsWith('meters[0].profile: unknown profile "nope"'))).toBe(true);
  });

  it('derives environment overrides from the schema', () => {
    const names = envOverrideNames().map((e) => e.name);
    expect(names).toContain('METERGATE_MQTT__PASSWORD');
    expect(names).toContain('METERGATE_HTTP__PORT');
    const config = validateConfig({ organization_id: ORG }, 'test', { METERGATE_HTTP__PORT: '9090', METERGATE_HTTP__ENABLED: 'false' });
    expect(config.http.port).toBe(9090);
    expect(config.http.enabled).toBe(false);
    expect(problemsOf({ organization_id: ORG }, { METERGATE_HTTP__PORT: 'eighty' })).toEqual(['http.port: must be integer']);
  });

  it('reports YAML syntax errors with the line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mg-cfg-'));
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, `organization_id: ${ORG}\nbuses:\n  - name: a\n   type: rtu\n`);
    expect(() => loadConfig(file, {})).toThrow(/line 4/);
  });
});
