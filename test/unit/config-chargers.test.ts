// The `ocpp` and `chargers` settings: what the loader refuses, and password_file.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import { authorizationKeyForms } from '../../src/ocpp/authorization-key.js';
import { CONFIG_BASE as BASE, configProblems as problemsOf } from '../helpers/config-problems.js';

const PASSWORD = '0123456789abcdef';

describe('chargers and ocpp settings', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mg-chargers-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('defaults: no chargers, ws on 8887 on every address, heartbeat every 300 s, a refusal counts 24 h', () => {
    const config = validateConfig(BASE, 'test', {});
    expect(config.chargers).toEqual([]);
    expect(config.ocpp).toEqual({ host: '0.0.0.0', port: 8887, heartbeat_interval_s: 300, storage_wait_s: 10, operation_timeout_s: 30, refusal_retry_h: 24 });
  });

  it('accepts accept_all and an id-tag list, and reads password_file', () => {
    const file = join(dir, 'cp2');
    writeFileSync(file, `${PASSWORD}-file\n`);
    const config = validateConfig({ ...BASE, chargers: [{ id: 'CP1', password: PASSWORD, auth: 'accept_all' }, { id: 'CP2', password_file: file, auth: { id_tags: ['04A1B2'] } }] }, 'test', {});
    expect(config.chargers[1]).toMatchObject({ id: 'CP2', password: `${PASSWORD}-file`, auth: { id_tags: ['04A1B2'] } });
  });

  it('refuses duplicate ids, no password, both password sources, a short password, a bad auth and wss without a certificate', () => {
    const problems = problemsOf({
      ocpp: { tls_port: 8888 },
      chargers: [
        { id: 'CP1', password: PASSWORD, auth: 'accept_all' },
        { id: 'CP1', password: PASSWORD, password_file: '/nonexistent', auth: 'accept_all' },
        { id: 'CP3', auth: 'accept_all' },
        { id: 'CP4', password: 'short', auth: 'accept_all' },
        { id: 'CP5', password: PASSWORD, auth: 'accept_some' },
      ],
    });
    expect(problems).toContain('chargers[1].id: "CP1" is used by another charger');
    expect(problems).toContain('chargers[1].password_file: set either password or password_file, not both');
    expect(problems.some((p) => p.startsWith('chargers[2].password: a charge point needs a password'))).toBe(true);
    expect(problems.some((p) => p.startsWith('chargers[3].password:'))).toBe(true);
    expect(problems.some((p) => p.startsWith('chargers[4].auth'))).toBe(true);
    expect(problems).toContain('ocpp.tls_port: wss needs the gateway certificate: set http.tls (cert_file, key_file)');
  });

  it('connectors: defaults for the limits, and every problem listed with its path', () => {
    const config = validateConfig({ ...BASE, chargers: [{ id: 'CP1', password: PASSWORD, auth: 'accept_all', connectors: [{ connector_id: 1, default_target: { departure_local_time: '07:00', energy_wh: 20_000 } }] }] }, 'test', {});
    expect(config.chargers[0]!.connectors).toEqual([{ connector_id: 1, max_current_a: 16, min_current_a: 6, phases: 3, voltage_v: 230, default_target: { departure_local_time: '07:00', energy_wh: 20_000 } }]);
    const problems = problemsOf({
      chargers: [
        {
          id: 'CP1',
          password: PASSWORD,
          auth: 'accept_all',
          connectors: [
            { connector_id: 1, min_current_a: 10, max_current_a: 8 },
            { connector_id: 1, default_target: { departure_local_time: '7:00', energy_wh: 0 } },
            { connector_id: 2, phases: 2, default_target: { energy_wh: 1000 } },
          ],
        },
      ],
    });
    expect(problems).toContain('chargers[0].connectors[0].min_current_a: 10 A is above max_current_a (8 A)');
    expect(problems).toContain('chargers[0].connectors[1].connector_id: connector 1 is listed twice');
    expect(problems.some((p) => p.startsWith('chargers[0].connectors[1].default_target.departure_local_time'))).toBe(true);
    expect(problems.some((p) => p.startsWith('chargers[0].connectors[1].default_target.energy_wh'))).toBe(true);
    expect(problems.some((p) => p.startsWith('chargers[0].connectors[2].phases'))).toBe(true);
    expect(problems.some((p) => p.startsWith('chargers[0].connectors[2].default_target') && p.includes('departure_local_time'))).toBe(true);
  });

  it('connector_meters must name configured meters and connector ids', () => {
    const problems = problemsOf({ chargers: [{ id: 'CP1', password: PASSWORD, auth: 'accept_all', connector_meters: { '1': 'no-such-meter', x: 'm' } }] });
    expect(problems).toContain('chargers[0].connector_meters.1: no-such-meter is not a configured meter (meters[].resource_id)');
    expect(problems.some((p) => p.startsWith('chargers[0].connector_meters'))).toBe(true);
    expect(problems.filter((p) => p.startsWith('chargers[0].connector_meters')).length).toBeGreaterThanOrEqual(2);
  });

  it('a password_file that is missing or holds a password of the wrong length is a problem naming it', () => {
    const short = join(dir, 'short');
    writeFileSync(short, 'short\n');
    const problems = problemsOf({ chargers: [{ id: 'CP1', password_file: join(dir, 'missing'), auth: 'accept_all' }, { id: 'CP2', password_file: short, auth: 'accept_all' }] });
    expect(problems.some((p) => p.startsWith('chargers[0].password_file:') && p.includes('does not exist'))).toBe(true);
    expect(problems).toContain('chargers[1].password_file: the password must be 16 to 40 characters (OCPP AuthorizationKey)');
  });

  it('ocpp.port: false leaves only wss://, and is refused without tls_port; METERGATE_OCPP__PORT still takes a number', () => {
    expect(problemsOf({ ocpp: { port: false } })).toContain('ocpp.port: false turns ws:// off, and without ocpp.tls_port no charger could connect: set ocpp.tls_port (wss://)');
    expect(problemsOf({ ocpp: { port: 'off' } }).some((p) => p.startsWith('ocpp.port'))).toBe(true);
    expect(validateConfig(BASE, 'test', { METERGATE_OCPP__PORT: '9000' }).ocpp.port).toBe(9000);
  });

  it('security_profile: 1 by default; 2 and 3 need wss://, 3 needs the client CA and no password; the CA file must be a PEM certificate', () => {
    const config = validateConfig({ ...BASE, chargers: [{ id: 'CP1', password: PASSWORD, auth: 'accept_all' }] }, 'test', {});
    expect(config.chargers[0]!.security_profile).toBe(1);
    const problems = problemsOf({
      chargers: [
        { id: 'CP1', password: PASSWORD, auth: 'accept_all', security_profile: 2 },
        { id: 'CP2', auth: 'accept_all', security_profile: 3 },
        { id: 'CP3', password: PASSWORD, auth: 'accept_all', security_profile: 4 },
      ],
    });
    expect(problems).toContain('chargers[0].security_profile: 2 needs wss://: set ocpp.tls_port (and http.tls)');
    expect(problems).toContain('chargers[1].security_profile: 3 needs wss://: set ocpp.tls_port (and http.tls)');
    expect(problems).toContain("chargers[1].security_profile: 3 needs ocpp.client_ca_file: the CA that signed the chargers' client certificates");
    expect(problems.some((p) => p.startsWith('chargers[1].password'))).toBe(false);
    expect(problems.some((p) => p.startsWith('chargers[2].security_profile'))).toBe(true);
    const notPem = join(dir, 'not-a-ca.pem');
    writeFileSync(notPem, 'hello\n');
    const caProblems = problemsOf({ ocpp: { client_ca_file: notPem } });
    expect(caProblems.some((p) => p.startsWith(`ocpp.client_ca_file: ${notPem} is not a PEM certificate`))).toBe(true);
    expect(caProblems).toContain('ocpp.client_ca_file: client certificates are checked on wss:// only: set ocpp.tls_port');
  });

  it('the AuthorizationKey is 16 to 40 printable ASCII characters (whitepaper: at least 16 bytes, up to 40 hex digits)', () => {
    const spaced = join(dir, 'spaced');
    writeFileSync(spaced, 'sixteen chars with spaces\n');
    const problems = problemsOf({
      chargers: [
        { id: 'CP1', password: 'x'.repeat(41), auth: 'accept_all' },
        { id: 'CP2', password: 'sixteen chars with spaces', auth: 'accept_all' },
        { id: 'CP3', password_file: spaced, auth: 'accept_all' },
        { id: 'CP4', password: 'a1'.repeat(20), auth: 'accept_all' },
      ],
    });
    expect(problems.some((p) => p.startsWith('chargers[0].password'))).toBe(true);
    expect(problems.some((p) => p.startsWith('chargers[1].password'))).toBe(true);
    expect(problems).toContain('chargers[2].password_file: the password must be printable ASCII without spaces (OCPP AuthorizationKey)');
    expect(problems.some((p) => p.startsWith('chargers[3]'))).toBe(false);
  });
});

describe('AuthorizationKey forms a charger may send', () => {
  it('the text always; for 32..40 hex digits also the 16..20 bytes they stand for', () => {
    expect(authorizationKeyForms('charger-secret-0123456789')).toEqual([Buffer.from('charger-secret-0123456789')]);
    const hex = '00112233445566778899aabbccddeeff';
    expect(authorizationKeyForms(hex)).toEqual([Buffer.from(hex), Buffer.from(hex, 'hex')]);
    expect(authorizationKeyForms(hex)[1]).toHaveLength(16);
    expect(authorizationKeyForms(`${hex}00112233`)[1]).toHaveLength(20);
    // Odd count of digits, or 30: text only.
    expect(authorizationKeyForms(`${hex}0`)).toHaveLength(1);
    expect(authorizationKeyForms(hex.slice(2))).toHaveLength(1);
  });
});
