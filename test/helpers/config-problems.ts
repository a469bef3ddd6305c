// What the config loader says of a config: the smallest valid base, and the problems it lists.
import { ConfigError, validateConfig } from '../../src/config/load.js';

/** The two settings every config needs. */
export const CONFIG_BASE = { organization_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301', data_dir: '/tmp/x' };

/** The problems the loader lists for CONFIG_BASE with `raw` on top (none: it loads). */
export function configProblems(raw: Record<string, unknown>): readonly string[] {
  try {
    validateConfig({ ...CONFIG_BASE, ...raw }, 'test', {});
    return [];
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.problems;
  }
}
