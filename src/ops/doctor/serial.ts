// doctor: serial ports exist and the service user may read and write them.
import { accessSync, constants, readFileSync, realpathSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import type { BusConfig } from '../../config/types.js';
import { errorCode, errorMessage, fail, pass, type CheckResult, type DoctorCheck, type DoctorEnv } from './types.js';

interface Account {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
  readonly groups: readonly number[];
}

/** The service user's uid, primary and supplementary groups, from /etc/passwd and /etc/group. */
export function lookupAccount(name: string, etc = '/etc'): Account | null {
  try {
    const user = readFileSync(`${etc}/passwd`, 'utf8')
      .split('\n')
      .map((l) => l.split(':'))
      .find((f) => f[0] === name);
    if (!user) return null;
    const groups = readFileSync(`${etc}/group`, 'utf8')
      .split('\n')
      .map((l) => l.split(':'))
      .filter((f) => f.length >= 4 && f[3].split(',').includes(name))
      .map((f) => Number(f[2]));
    return { name, uid: Number(user[2]), gid: Number(user[3]), groups };
  } catch {
    return null;
  }
}

function groupName(gid: number, etc = '/etc'): string {
  try {
    const g = readFileSync(`${etc}/group`, 'utf8')
      .split('\n')
      .map((l) => l.split(':'))
      .find((f) => Number(f[2]) === gid && f[0] !== '');
    return g ? g[0] : String(gid);
  } catch {
    return String(gid);
  }
}

/** Whether `account` may read and write a file with this owner, group and mode (classic Unix rules). */
export function mayReadWrite(account: Account, st: { uid: number; gid: number; mode: number }): boolean {
  if (account.uid === 0) return true;
  const perm = st.mode & 0o777;
  if (st.uid === account.uid) return (perm & 0o600) === 0o600;
  if (st.gid === account.gid || account.groups.includes(st.gid)) return (perm & 0o060) === 0o060;
  return (perm & 0o006) === 0o006;
}

function checkSerialPort(bus: BusConfig, index: number, env: DoctorEnv): CheckResult {
  const name = `serial ${bus.name}`;
  const port = bus.port ?? '';
  let st;
  try {
    st = statSync(port);
  } catch (err) {
    return fail(
      name,
      `${port} does not exist (${errorCode(err) ?? errorMessage(err)})`,
      `plug in the RS-485 adapter; \`ls -l /dev/serial/by-id/\` lists attached adapters; set buses[${index}].port (stable names: systemd/99-metergate-serial.rules)`,
    );
  }
  if (!st.isCharacterDevice()) return fail(name, `${port} is not a serial device`, `set buses[${index}].port to the adapter's device, e.g. /dev/ttyUSB0 or /dev/serial/by-id/...`);
  const real = (() => {
    try {
      return realpathSync(port);
    } catch {
      return port;
    }
  })();
  const where = real === port ? port : `${port} -> ${real}`;
  const group = groupName(st.gid);
  const isRoot = process.getuid?.() === 0;
  if (isRoot) {
    // Run with sudo: judge for the user the service runs as, not for root.
    const account = lookupAccount(env.serviceUser);
    if (!account) return fail(name, `${where} present, but user ${env.serviceUser} does not exist`, 'install the metergate package (or run scripts/install.sh from a checkout), which creates the service user');
    if (!mayReadWrite(account, st)) {
      return fail(
        name,
        `${where} (group ${group}, mode ${(st.mode & 0o777).toString(8)}) is not readable and writable by ${env.serviceUser}`,
        group === 'root' || group === 'tty'
          ? `give the port to group dialout with a udev rule (GROUP="dialout", MODE="0660": /opt/metergate/systemd/99-metergate-serial.rules), then replug the adapter`
          : `sudo usermod -aG ${group} ${env.serviceUser} && sudo systemctl restart metergate`,
      );
    }
    return pass(name, `${where} present, read/write for ${env.serviceUser} (group ${group})`);
  }
  try {
    accessSync(port, constants.R_OK | constants.W_OK);
  } catch {
    return fail(name, `${where} (group ${group}) is not readable and writable by you`, `sudo usermod -aG ${group} $USER and log in again, or run \`sudo metergate doctor\``);
  }
  return pass(name, `${where} present and read/write (group ${group})`);
}

function checkTcpGateway(bus: BusConfig, index: number, env: DoctorEnv): Promise<CheckResult> {
  const name = `${bus.type === 'p1-tcp' ? 'p1-tcp' : 'modbus-tcp'} ${bus.name}`;
  const target = `${bus.host}:${bus.tcp_port}`;
  return new Promise((resolve) => {
    const socket = connect({ host: bus.host!, port: bus.tcp_port, timeout: env.timeoutMs });
    const done = (r: CheckResult) => {
      socket.destroy();
      resolve(r);
    };
    socket.once('connect', () => done(pass(name, `${target} accepts connections`)));
    socket.once('timeout', () => done(fail(name, `${target} does not answer within ${env.timeoutMs} ms`, `check the gateway's address (buses[${index}].host/tcp_port), power and network cable`)));
    socket.once('error', (err) => done(fail(name, `${target}: ${errorCode(err) ?? errorMessage(err)}`, `check buses[${index}].host and tcp_port, and that the ${bus.type === 'p1-tcp' ? 'P1 serial bridge' : 'Modbus TCP gateway'} is powered and reachable`)));
  });
}

export const serialCheck: DoctorCheck = {
  name: 'serial',
  needsConfig: true,
  async run(env) {
    const config = env.config!;
    const used = new Set(config.meters.map((m) => m.bus));
    const results: CheckResult[] = [];
    for (const [i, bus] of config.buses.entries()) {
      if (!used.has(bus.name)) continue;
      results.push(bus.type === 'rtu' || bus.type === 'p1' ? checkSerialPort(bus, i, env) : await checkTcpGateway(bus, i, env));
    }
    if (results.length === 0) results.push(pass('serial', 'no meters configured, no bus to check'));
    return results;
  },
};
