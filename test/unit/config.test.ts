import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, EX_CONFIG, envOverrideNames, loadConfig, loadConfigWithSources, validateConfig } from '../../src/config/load.js';
import { editDistance, likelyMeant } from '../../src/config/nearest.js';

const ORG = '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11';

function loadConfigWithSourcesOf(raw: unknown, env: NodeJS.ProcessEnv) {
  const dir = mkdtempSync(join(tmpdir(), 'mg-cfg-'));
  const file = join(dir, 'config.yaml');
  writeFileSync(file, JSON.stringify(raw)); // JSON is YAML
  return loadConfigWithSources(file, env);
}

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
    expect(problems.find((p) => p.startsWith('bogus: '))).toMatch(/^bogus: is not a known setting \(known here: organization_id, .*, mqtt, .*\)$/);
  });

  it('lists the problems of every layer at once: environment, schema, cross checks, secret files', () => {
    const problems = problemsOf(
      {
        organization_id: 'not-a-uuid',
        buses: [{ name: 'a', type: 'tcp', host: 'x' }, { name: 'a', type: 'tcp', host: 'y' }, 5],
        meters: [{ resource_id: ORG, bus: 'b', unit_id: 300, profile: 'sdm630', extra_metrics: ['nope'] }],
        mqtt: { url: 'mqtts://broker:8883', username: 'gw', password_file: '/nonexistent/mqtt-password', reconnect_min_ms: 5000, reconnect_max_ms: 1000 },
      },
      { METERGATE_MQTT__PASWORD: 'pw' },
    );
    expect(problems).toEqual([
      'METERGATE_MQTT__PASWORD: names no setting; did you mean METERGATE_MQTT__PASSWORD?',
      'organization_id: must match format "uuid"',
      'buses[2]: must be object',
      'meters[0].unit_id: must be <= 247',
      'buses[1].name: "a" is used by another bus',
      'meters[0].bus: no bus named "b" (known: a)',
      expect.stringMatching(/^meters\[0\]\.extra_metrics\[0\]: profile "sdm630" has no metric "nope" \(has: /),
      'mqtt.reconnect_max_ms: must be >= mqtt.reconnect_min_ms',
      'mqtt.password_file: /nonexistent/mqtt-password does not exist (write the broker password the operator gave you into it)',
    ]);
  });

  it('refuses a username without any password source; a password, a password file, the environment or a client certificate is one', () => {
    const mqtt = { url: 'mqtts://broker:8883', username: 'gw' };
    expect(problemsOf({ organization_id: ORG, mqtt })).toEqual([
      'mqtt.username: has no password: set mqtt.password_file (or mqtt.password, or METERGATE_MQTT__PASSWORD in the environment)',
    ]);
    // Set by the environment alone: the problem says where the username came from.
    expect(problemsOf({ organization_id: ORG, mqtt: { url: mqtt.url } }, { METERGATE_MQTT__USERNAME: 'gw' })).toEqual([
      'mqtt.username: has no password: set mqtt.password_file (or mqtt.password, or METERGATE_MQTT__PASSWORD in the environment) (from the environment: METERGATE_MQTT__USERNAME)',
    ]);
    const dir = mkdtempSync(join(tmpdir(), 'mg-cfg-'));
    writeFileSync(join(dir, 'pw'), 'secret\n');
    expect(validateConfig({ organization_id: ORG, mqtt: { ...mqtt, password_file: join(dir, 'pw') } }, 'test', {}).mqtt!.password).toBe('secret');
    expect(validateConfig({ organization_id: ORG, mqtt: { ...mqtt, password: 'inline' } }, 'test', {}).mqtt!.password).toBe('inline');
    expect(validateConfig({ organization_id: ORG, mqtt }, 'test', { METERGATE_MQTT__PASSWORD: 'from-env' }).mqtt!.password).toBe('from-env');
    expect(problemsOf({ organization_id: ORG, mqtt: { ...mqtt, cert_file: '/etc/metergate/client.pem', key_file: '/etc/metergate/client.key' } })).toEqual([]);
  });

  it('leaves the build and test scripts\' own METERGATE_ variables alone (.ci/run exports them before the suites start daemons)', () => {
    expect(problemsOf({ organization_id: ORG }, { METERGATE_DEBIAN_ROOTS: '/var/cache/x', METERGATE_PACKAGE_CACHE: '/var/cache/y', METERGATE_DEB_MAINTAINER: 'a <b@c>' })).toEqual([]);
  });

  it('refuses a METERGATE_ variable that names no setting, with the nearest one', () => {
    const ok = { organization_id: ORG };
    expect(problemsOf(ok, { METERGATE_MQTT__PASWORD: 'x' })).toEqual(['METERGATE_MQTT__PASWORD: names no setting; did you mean METERGATE_MQTT__PASSWORD?']);
    expect(problemsOf(ok, { METERGATE_HTTP_PORT: '9090' })).toEqual(['METERGATE_HTTP_PORT: names no setting; did you mean METERGATE_HTTP__PORT?']);
    expect(problemsOf(ok, { metergate_http__port: '9090' })).toEqual(['metergate_http__port: names no setting (variable names are upper case): did you mean METERGATE_HTTP__PORT?']);
    expect(problemsOf(ok, { METERGATE_BUSES: 'x' })).toEqual(['METERGATE_BUSES: buses is a list; lists are set in the config file only']);
    expect(problemsOf(ok, { METERGATE_MQTT: 'x' })).toEqual(['METERGATE_MQTT: mqtt is a section; set its settings one by one, e.g. METERGATE_MQTT__URL']);
    expect(problemsOf(ok, { METERGATE_PROFILES__MY__VENDOR: 'x' })).toEqual(['METERGATE_PROFILES__MY__VENDOR: profiles.my.vendor is inside a map of named entries, which is set in the config file only']);
    // Other variables are none of our business.
    expect(problemsOf(ok, { PATH: '/usr/bin', METERGATEWAY: 'x', HOME: '/root' })).toEqual([]);
  });

  it('suggests the known key an unknown one is likely a typo of, at any depth', () => {
    const problems = problemsOf({
      organization_id: ORG,
      pol: { interval_ms: 1000 },
      buses: [{ name: 'a', type: 'rtu', port: '/dev/ttyUSB0', baudrate: 9600 }],
      mqtt: { url: 'mqtts://b:8883', usrname: 'gw' },
      profiles: { my: { vendor: 'A', model: 'B', registers: [{ metric: 'x', address: 1, type: 'float32', unit: 'W', scael: 2 }] } },
    });
    expect(problems).toEqual([
      'pol: is not a known setting; did you mean poll?',
      'buses[0].baudrate: is not a known setting; did you mean baud_rate?',
      'profiles.my.registers[0].scael: is not a known setting; did you mean scale?',
      'mqtt.usrname: is not a known setting; did you mean username?',
    ]);
  });

  it('lets an environment password replace the file\'s password_file (and the reverse); both from the environment is a problem naming both', () => {
    const file = { organization_id: ORG, mqtt: { url: 'mqtts://b:8883', username: 'gw', password_file: '/nonexistent/mqtt-password' } };
    const { config, env } = loadConfigWithSourcesOf(file, { METERGATE_MQTT__PASSWORD: 'from-env' });
    expect(config.mqtt).toMatchObject({ password: 'from-env' });
    expect(config.mqtt!.password_file).toBeUndefined();
    expect(env.replaced).toEqual([{ path: 'mqtt.password_file', by: 'METERGATE_MQTT__PASSWORD' }]);
    const dir = mkdtempSync(join(tmpdir(), 'mg-cfg-'));
    writeFileSync(join(dir, 'pw'), 'from-file\n');
    expect(validateConfig({ ...file, mqtt: { ...file.mqtt, password_file: undefined, password: 'inline' } }, 'test', { METERGATE_MQTT__PASSWORD_FILE: join(dir, 'pw') }).mqtt!.password).toBe('from-file');
    expect(problemsOf(file, { METERGATE_MQTT__PASSWORD: 'a', METERGATE_MQTT__PASSWORD_FILE: join(dir, 'pw') })).toEqual([
      'mqtt.password_file: set either mqtt.password or mqtt.password_file, not both (from the environment: METERGATE_MQTT__PASSWORD, METERGATE_MQTT__PASSWORD_FILE)',
    ]);
    // Both in the file stays the file's own problem.
    expect(problemsOf({ ...file, mqtt: { ...file.mqtt, password: 'x', password_file: join(dir, 'pw') } })).toEqual(['mqtt.password_file: set either mqtt.password or mqtt.password_file, not both']);
  });

  it('says when a problem exists only because a variable made a section', () => {
    expect(problemsOf({ organization_id: ORG }, { METERGATE_MQTT__USERNAME: 'gw', METERGATE_MQTT__PASSWORD: 'pw' })).toEqual([
      'mqtt.url: is required (mqtt is there only because of METERGATE_MQTT__USERNAME, METERGATE_MQTT__PASSWORD in the environment)',
    ]);
  });

  it('an unknown metric or profile that is a typo names the one meant (issue 31 point 11)', () => {
    const problems = problemsOf({
      organization_id: ORG,
      buses: [{ name: 'a', type: 'tcp', host: 'localhost' }],
      meters: [
        { resource_id: ORG, bus: 'a', unit_id: 1, profile: 'sdm630', extra_metrics: ['volatge_l1', 'current_l1', 'frequncy', 'totally_unknown'] },
        { resource_id: '8e7d6c5b-4a39-4281-8f7e-6d5c4b3a2918', bus: 'a', unit_id: 2, profile: 'sdm360' },
      ],
    });
    expect(problems).toEqual([
      'meters[0].extra_metrics[0]: profile "sdm630" has no metric "volatge_l1"; did you mean voltage_l1?',
      'meters[0].extra_metrics[2]: profile "sdm630" has no metric "frequncy"; did you mean frequency?',
      expect.stringMatching(/^meters\[0\]\.extra_metrics\[3\]: profile "sdm630" has no metric "totally_unknown" \(has: .*voltage_l1.*\)$/),
      'meters[1].profile: unknown profile "sdm360"; did you mean sdm630?',
    ]);
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
    expect(problemsOf({ organization_id: ORG }, { METERGATE_HTTP__PORT: 'eighty' })).toEqual(['http.port: must be integer (from the environment: METERGATE_HTTP__PORT)']);
  });

  it('reports YAML syntax errors with the line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mg-cfg-'));
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, `organization_id: ${ORG}\nbuses:\n  - name: a\n   type: rtu\n`);
    expect(() => loadConfig(file, {})).toThrow(/line 4/);
  });
});

describe('nearest name', () => {
  it('counts edits, a swap of neighbours as one', () => {
    expect(editDistance('password', 'password')).toBe(0);
    expect(editDistance('pasword', 'password')).toBe(1);
    expect(editDistance('passwrod', 'password')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
  });
  it('suggests only what is likely a typo', () => {
    expect(likelyMeant('usrname', ['url', 'username', 'password'])).toBe('username');
    expect(likelyMeant('bogus', ['poll', 'buses', 'meters'])).toBeNull();
  });
});
