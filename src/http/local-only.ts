// The operational routes (/status, /status.json, /metrics) show organization and resource
// ids, the broker's host and its last error: when the API listens beyond loopback they
// answer only clients on this machine. A reverse proxy on this machine counts as local,
// so one that forwards these paths exposes them again (docs/http-api.md).
import type { Request, RequestHandler } from 'express';
import { isLoopbackAddress, isLoopbackHost } from '../config/http-exposure.js';
import type { Config } from '../config/types.js';
import { HttpProblem } from './errors.js';

/** The operational paths; `/status` also covers the page's script under /status/. */
export const LOCAL_ONLY_PATHS = ['/status', '/status.json', '/metrics'];

/**
 * Whether a request may see what the operational routes show: always when the API listens
 * on loopback only, else only from this machine (see localClientsOnly). /healthz asks too,
 * to leave ids and the broker's host out of what it tells the LAN.
 */
export function localClient(http: Config['http']): (req: Request) => boolean {
  if (isLoopbackHost(http.host)) return () => true;
  return (req) => {
    const { remoteAddress, localAddress } = req.socket;
    return remoteAddress !== undefined && (isLoopbackAddress(remoteAddress) || remoteAddress === localAddress);
  };
}

/**
 * Passes a request from this machine: a loopback peer, or a peer whose address is the
 * address it connected to (this machine talking to its own LAN address; a remote host
 * cannot complete a TCP handshake with our own address as its source). Others get 403.
 */
export function localClientsOnly(http: Config['http']): RequestHandler {
  if (isLoopbackHost(http.host)) return (_req, _res, next) => next();
  const wildcard = http.host === '0.0.0.0' || http.host === '::';
  const tunnelTo = wildcard ? '127.0.0.1' : http.host.includes(':') ? `[${http.host}]` : http.host;
  const local = localClient(http);
  return (req, _res, next) => {
    if (local(req)) {
      next();
      return;
    }
    const path = req.originalUrl.split('?')[0].slice(0, 100);
    const port = req.socket.localPort ?? http.port;
    next(
      new HttpProblem(403, `${path} is served only to clients on the gateway itself when the API listens beyond loopback; from elsewhere use an SSH tunnel (ssh -L 8080:${tunnelTo}:${port} <gateway>, then http${http.tls ? 's' : ''}://localhost:8080${path})`),
    );
  };
}
