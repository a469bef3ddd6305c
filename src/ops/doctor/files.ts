// doctor: the service user can read the configured files (certificates, secrets).
import { statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Config } from '../../config/types.js';
import { lookupAccount } from './serial.js';
import { fail, pass, warn, type CheckResult, type DoctorCheck } from './types.js';

type Account = NonNullable<ReturnType<typeof lookupAccount>>;
type StatLike = { uid: number; gid: number; mode: number };

/** Which permission class of `st` applies to `account` (classic Unix rules, no ACLs). */
function permFor(account: Account, st: StatLike): number {
  const perm = st.mode & 0o777;
  if (account.uid === 0) return 0o7;
  if (st.uid === account.uid) return (perm >> 6) & 0o7;
  if (st.gid === account.gid || account.groups.includes(st.gid)) return (perm >> 3) & 0o7;
  return perm & 0o7;
}

/**
 * Whether `account` can read `path`: x on every directory above it, r on the file.
 * Returns the first obstacle, or null. `stat` is injectable for tests.
 */
export interface Obstacle {
  readonly path: string;
  readonly kind: 'directory' | 'file';
  readonly text: string;
}

export function readObstacle(account: Account, path: string, stat: (p: string) => StatLike = statSync): Obstacle | null {
  const abs = resolve(path);
  const dirs: string[] = [];
  for (let d = dirname(abs); ; d = dirname(d)) {
    dirs.unshift(d);
    if (dirname(d) === d) break;
  }
  for (const d of dirs) {
    let st: StatLike;
    try {
      st = stat(d);
    } catch {
      return null; // cannot look (we lack the right ourselves): no verdict
    }
    if ((permFor(account, st) & 0o1) === 0) return { path: d, kind: 'directory', text: `cannot enter ${d} (mode ${(st.mode & 0o777).toString(8)})` };
  }
  let st: StatLike;
  try {
    st = stat(abs);
  } catch {
    return null; // missing files are the config line's business
  }
  if ((permFor(account, st) & 0o4) === 0) return { path: abs, kind: 'file', text: `cannot read ${abs} (mode ${(st.mode & 0o777).toString(8)}, uid ${st.uid}, gid ${st.gid})` };
  return null;
}

/** The files the daemon reads at start: the config itself and every *_file it names. */
export function filesOf(configPath: string, config: Config): Array<{ setting: string; path: string; secret: boolean }> {
  const out = [{ setting: 'config', path: configPath, secret: true }];
  const mq = config.mqtt;
  if (mq?.password_file) out.push({ setting: 'mqtt.password_file', path: mq.password_file, secret: true });
  if (mq?.ca_file) out.push({ setting: 'mqtt.ca_file', path: mq.ca_file, secret: false });
  if (mq?.cert_file) out.push({ setting: 'mqtt.cert_file', path: mq.cert_file, secret: false });
  if (mq?.key_file) out.push({ setting: 'mqtt.key_file', path: mq.key_file, secret: true });
  const token = config.prices.entsoe.security_token_file;
  if (config.prices.source === 'entsoe' && token) out.push({ setting: 'prices.entsoe.security_token_file', path: token, secret: true });
  return out;
}

/** The placeholder ids of config/example.yaml: valid UUIDs, so the schema lets them through. */
const PLACEHOLDER = /^00000000-0000-4000-8000-0000000000\d\d$/;

export function placeholderIds(config: Config): string[] {
  const found: string[] = [];
  if (PLACEHOLDER.test(config.organization_id)) found.push('organization_id');
  config.meters.forEach((m, i) => {
    if (PLACEHOLDER.test(m.resource_id)) found.push(`meters[${i}].resource_id`);
  });
  return found;
}

/**
 * What the service user will meet at start that `config check` (run as root or as you)
 * cannot see: files it may not read, secrets others may read, and the example's
 * placeholder ids left in place (data would go to a resource nobody owns).
 */
export const filesCheck: DoctorCheck = {
  name: 'files',
  needsConfig: true,
  async run(env) {
    const config = env.config!;
    const results: CheckResult[] = [];
    const placeholders = placeholderIds(config);
    if (placeholders.length > 0) {
      results.push(
        fail('ids', `${placeholders.join(', ')} still hold the example's placeholder`, `set them to the ids the operator issued for this site and its meters (${env.configPath})`),
      );
    }
    // The unit's ProtectSystem=strict leaves only its StateDirectory (/var/lib/metergate) writable.
    if (resolve(config.data_dir) !== '/var/lib/metergate') {
      results.push(
        warn(
          'data_dir',
          `${config.data_dir} is not the service's state directory: under systemd's ProtectSystem=strict the daemon cannot write there`,
          `sudo systemctl edit metergate, add "[Service]" and "ReadWritePaths=${config.data_dir}", and \`sudo chown metergate: ${config.data_dir}\`; or keep data_dir: /var/lib/metergate`,
        ),
      );
    }
    const account = lookupAccount(env.serviceUser);
    if (!account) {
      results.push(warn('files', `user ${env.serviceUser} does not exist, so its access to the config files cannot be checked`, 'install the metergate package (or run scripts/install.sh from a checkout), which creates the service user'));
      return results;
    }
    const files = filesOf(env.configPath, config);
    let problems = 0;
    const blockedDirs = new Set<string>();
    for (const f of files) {
      const obstacle = readObstacle(account, f.path);
      if (obstacle) {
        problems++;
        if (obstacle.kind === 'directory') {
          // One line per directory, however many files sit behind it.
          if (blockedDirs.has(obstacle.path)) continue;
          blockedDirs.add(obstacle.path);
          results.push(
            fail(
              `files ${f.setting}`,
              `${env.serviceUser} ${obstacle.text}, so it cannot read ${f.path}: the service would stop at start with exit 78`,
              obstacle.path.startsWith('/etc/metergate')
                ? `sudo chown root:${env.serviceUser} ${obstacle.path} && sudo chmod 0750 ${obstacle.path}`
                : `move the file to /etc/metergate/ (root:${env.serviceUser} 0640) and point ${f.setting} at it`,
            ),
          );
        } else {
          results.push(
            fail(`files ${f.setting}`, `${env.serviceUser} ${obstacle.text}: the service would stop at start with exit 78`, `sudo chown root:${env.serviceUser} ${f.path} && sudo chmod 0640 ${f.path}`),
          );
        }
        continue;
      }
      if (f.secret) {
        try {
          const st = statSync(f.path);
          if ((st.mode & 0o004) !== 0) {
            problems++;
            results.push(warn(`files ${f.setting}`, `${f.path} is readable by every user on this machine (mode ${(st.mode & 0o777).toString(8)})`, `sudo chown root:${env.serviceUser} ${f.path} && sudo chmod 0640 ${f.path}`));
          }
        } catch {
          /* reported by the config line */
        }
      }
    }
    if (problems === 0) results.push(pass('files', `${env.serviceUser} can read ${files.map((f) => f.path).join(', ')}; secrets not world-readable`));
    return results;
  },
};
