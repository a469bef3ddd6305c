// One human line for a daemon that could not start (stderr, beside the structured log the
// journal keeps): what failed, in the config's words, and what to do. Pure: no I/O.
import type { Config } from '../config/types.js';

interface SystemError {
  readonly code?: string;
  readonly syscall?: string;
  readonly port?: number;
  readonly address?: string;
  readonly path?: string;
  readonly message?: string;
}

/** Which setting asks for this listening port (http.port, ocpp.port, ocpp.tls_port). */
function portSetting(config: Config, port: number | undefined): string {
  const settings: Array<[string, number | false | undefined]> = [
    ['http.port', config.http.enabled ? config.http.port : undefined],
    ['ocpp.port', config.ocpp.port],
    ['ocpp.tls_port', config.ocpp.tls_port],
  ];
  const named = settings.filter(([, p]) => p !== undefined && p !== false && p === port).map(([name]) => name);
  return named.length > 0 ? named.join(' / ') : 'the port in the config';
}

export function startupFailureLine(err: unknown, config: Config): string {
  const e = (typeof err === 'object' && err !== null ? err : { message: String(err) }) as SystemError;
  const where = e.address !== undefined && e.port !== undefined ? `${e.address}:${e.port}` : String(e.port ?? '');
  if (e.syscall === 'listen' && e.code === 'EADDRINUSE') {
    return `metergate: cannot start: ${where} (${portSetting(config, e.port)}) is already in use by another program (\`sudo ss -ltnp 'sport = :${e.port}'\` names it); stop that program or set ${portSetting(config, e.port)} to a free port`;
  }
  if (e.syscall === 'listen' && e.code === 'EACCES') {
    return `metergate: cannot start: listening on ${where} (${portSetting(config, e.port)}) is not permitted; ports below 1024 need root or CAP_NET_BIND_SERVICE: use a port above 1023`;
  }
  if (e.syscall === 'listen' && e.code === 'EADDRNOTAVAIL') {
    return `metergate: cannot start: ${e.address ?? '?'} is not an address of this machine (${portSetting(config, e.port)}'s host): set http.host / ocpp.host to one of its addresses, or 0.0.0.0`;
  }
  if (e.code === 'EACCES' || e.code === 'EPERM' || e.code === 'EROFS' || e.code === 'SQLITE_CANTOPEN' || e.code === 'SQLITE_READONLY') {
    return `metergate: cannot start: ${e.path ?? config.data_dir}: ${e.message ?? e.code}; the data directory (data_dir ${config.data_dir}) must be writable by the user metergate runs as (\`metergate doctor\` checks it)`;
  }
  if (e.code === 'ENOSPC' || e.code === 'SQLITE_FULL') {
    return `metergate: cannot start: the disk holding ${config.data_dir} is full (\`df -h ${config.data_dir}\`); free space, then start again`;
  }
  const message = (e.message ?? String(err)).split('\n')[0];
  return `metergate: cannot start: ${message}${e.code ? ` (${e.code})` : ''}; the log above has the details, \`metergate doctor\` checks the set-up`;
}
