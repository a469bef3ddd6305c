import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.js';

describe('config/example.yaml (what install.sh writes to /etc/metergate/config.yaml)', () => {
  it('is valid except for the secret files an installer still has to create', () => {
    let problems: readonly string[] = [];
    try {
      loadConfig('config/example.yaml', {});
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      problems = (err as ConfigError).problems;
    }
    expect(problems).toEqual([
      'mqtt.password_file: cannot read /etc/metergate/mqtt-password (ENOENT)',
      'prices.entsoe.security_token_file: cannot read /etc/metergate/entsoe-token (ENOENT)',
    ]);
  });
});
