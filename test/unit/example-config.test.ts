import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, loadConfigWithSources, validateConfig } from '../../src/config/load.js';

function problemsOf(load: () => unknown): readonly string[] {
  try {
    load();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  return [];
}

describe('config/example.yaml (what install.sh writes to /etc/metergate/config.yaml)', () => {
  it('is valid except for the secret files an installer still has to create, each named with what to put there', () => {
    expect(problemsOf(() => loadConfig('config/example.yaml', {}))).toEqual([
      'mqtt.password_file: /etc/metergate/mqtt-password does not exist (write the broker password the operator gave you into it)',
      'prices.entsoe.security_token_file: /etc/metergate/entsoe-token does not exist (write your ENTSO-E Transparency Platform API token into it, or set prices.source: none)',
    ]);
  });

  it('needs no ENTSO-E token with prices.source: none, and a section whose last line is commented out keeps its defaults', () => {
    // What an installer without an ENTSO-E account does: switch the source off and comment the token out.
    const passwordFile = join(mkdtempSync(join(tmpdir(), 'mg-example-')), 'mqtt-password');
    writeFileSync(passwordFile, 's3cret\n');
    const text = readFileSync('config/example.yaml', 'utf8')
      .replace('/etc/metergate/mqtt-password', passwordFile)
      .replace(/^(\s*source:) entsoe\b/m, '$1 none')
      .replace(/^(\s*)(security_token_file:)/m, '$1# $2');
    const raw = parseDocument(text).toJS() as { prices: { entsoe: unknown } };
    expect(raw.prices.entsoe).toBeNull(); // `entsoe:` with nothing under it
    const config = validateConfig(raw, 'edited example', {});
    expect(config.prices.source).toBe('none');
    expect(config.prices.entsoe.base_url).toMatch(/^https:\/\//);
    expect(config.mqtt?.password).toBe('s3cret');
  });

  it('accepts the shipped config/example.yaml with the README\'s variables', () => {
    const example = 'config/example.yaml';
    const env = { METERGATE_MQTT__PASSWORD: 'pw', METERGATE_HTTP__PORT: '9090' };
    // The example's own secret files do not exist here: the token file is the only problem left.
    // The password replaces the shipped password_file line instead of clashing with it.
    expect(problemsOf(() => loadConfig(example, env))).toEqual([expect.stringMatching(/^prices\.entsoe\.security_token_file: \/etc\/metergate\/entsoe-token does not exist/)]);
    const { config, env: layer } = loadConfigWithSources(example, { ...env, METERGATE_PRICES__ENTSOE__SECURITY_TOKEN: 'token' });
    expect(config.http.port).toBe(9090);
    expect(config.mqtt).toMatchObject({ username: 'gateway-0001', password: 'pw' });
    expect(config.prices.entsoe.security_token).toBe('token');
    expect([...layer.setBy.values()].sort()).toEqual(['METERGATE_HTTP__PORT', 'METERGATE_MQTT__PASSWORD', 'METERGATE_PRICES__ENTSOE__SECURITY_TOKEN']);
  });
});
