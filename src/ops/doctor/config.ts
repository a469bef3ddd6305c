// doctor: the configuration loads without problems.
import { missingConfigFix, NO_SUCH_FILE } from '../../config/missing-file.js';
import { pass, fail, type DoctorCheck } from './types.js';

export const configCheck: DoctorCheck = {
  name: 'config',
  needsConfig: false,
  async run(env) {
    if (env.config) {
      const c = env.config;
      return [pass('config', `${env.configPath} valid: ${c.meters.length} meter(s) on ${c.buses.length} bus(es), ${c.mqtt ? 'broker set' : 'no broker'}, price regions ${c.prices.regions.join(', ') || 'none'}`)];
    }
    if (env.configProblems[0]?.startsWith(NO_SUCH_FILE)) return [fail('config', `${env.configPath}: no config file there`, missingConfigFix(env.configPath))];
    return [
      fail(
        'config',
        `${env.configPath} invalid: ${env.configProblems.join('; ')}`,
        `edit ${env.configPath} (every problem is listed as path: message; \`metergate config check ${env.configPath}\` repeats them)`,
      ),
    ];
  },
};
