// The HTTP server module: listens on config.http.host:port, over TLS when http.tls is
// set (the certificate and key are read again on SIGHUP), stops gracefully (stops
// accepting, lets in-flight requests finish, closes idle keep-alive connections, and
// cuts whatever is left after a grace period).
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Config } from '../config/types.js';
import type { Module } from '../lifecycle.js';
import { createApp, ROUTES } from './app.js';
import type { HttpDeps, RouteRegistrar } from './deps.js';
import { answerClientErrors } from './client-errors.js';
import { httpRequestsCounter } from './metrics.js';

export interface HttpServerOptions {
  /** Routes to serve; the default is every route group. */
  readonly routes?: readonly RouteRegistrar[];
  /** How long stop() waits for in-flight requests before closing their sockets. */
  readonly shutdownGraceMs?: number;
  /** Time limits for a request's headers and for the whole request (408 beyond). */
  readonly headersTimeoutMs?: number;
  readonly requestTimeoutMs?: number;
  /**
   * How often Node checks those limits (default 1 s; Node's own 30 s let a slow-loris
   * client hold a socket up to 50 s against a 20 s header limit).
   */
  readonly timeoutCheckIntervalMs?: number;
}

type TlsFiles = NonNullable<Config['http']['tls']>;

/**
 * Requests a client may have pipelined on one connection and not had answered yet. Node
 * takes every request of a TCP read and keeps the answers the client has not read in
 * memory (~1,000 GETs of openapi.json, 90 kB each: RSS 84 -> 165 MB, held while the
 * client stays connected). Clients send the next request after reading an answer
 * (browsers and curl do not pipeline); beyond this the connection is closed.
 */
export const MAX_PIPELINED_REQUESTS = 32;

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** The app behind the bound on a connection's unanswered requests. */
function boundPipelining(app: Handler, closed: (remote: string | undefined) => void): Handler {
  const unanswered = new WeakMap<object, number>();
  return (req, res) => {
    const socket = req.socket;
    const n = (unanswered.get(socket) ?? 0) + 1;
    unanswered.set(socket, n);
    res.once('close', () => unanswered.set(socket, (unanswered.get(socket) ?? 1) - 1));
    if (n > MAX_PIPELINED_REQUESTS) {
      if (!socket.destroyed) closed(socket.remoteAddress);
      socket.destroy();
      return;
    }
    app(req, res);
  };
}

function readTlsFiles(tls: TlsFiles): { cert: string; key: string } {
  return { cert: readFileSync(tls.cert_file, 'utf8'), key: readFileSync(tls.key_file, 'utf8') };
}

export class HttpServer implements Module {
  readonly name = 'http';
  private server?: Server | TlsServer;
  private readonly onSighup = (): void => {
    this.reloadTls();
  };

  constructor(
    private readonly deps: HttpDeps,
    private readonly options: HttpServerOptions = {},
  ) {}

  async start(): Promise<void> {
    const { host, port } = this.deps.config.http;
    const headersTimeoutMs = this.options.headersTimeoutMs ?? 20_000;
    const requestTimeoutMs = this.options.requestTimeoutMs ?? 60_000;
    const tls = this.deps.config.http.tls;
    const httpOptions: ServerOptions = {
      headersTimeout: headersTimeoutMs,
      requestTimeout: requestTimeoutMs,
      keepAliveTimeout: 5_000,
      // A request without Host is refused by the app, as problem+json (Node's own 400 has no body).
      requireHostHeader: false,
      connectionsCheckingInterval: this.options.timeoutCheckIntervalMs ?? 1_000,
    };
    const app = boundPipelining(createApp(this.deps, this.options.routes ?? ROUTES), (remote) => this.deps.logger.warn({ remote, max: MAX_PIPELINED_REQUESTS }, 'HTTP connection closed: more requests pipelined than answered'));
    const server = tls ? createTlsServer({ ...httpOptions, ...readTlsFiles(tls), minVersion: 'TLSv1.2' }, app) : createServer(httpOptions, app);
    if (tls) {
      // A failed handshake has no HTTP answer to give; say why at debug level (never the bytes).
      server.on('tlsClientError', (err: NodeJS.ErrnoException) => this.deps.logger.debug({ code: err.code }, 'TLS handshake failed'));
    }
    const requests = httpRequestsCounter(this.deps.metrics);
    answerClientErrors(server as Server, {
      headersTimeoutMs,
      requestTimeoutMs,
      logger: this.deps.logger,
      count: (method, status) => requests.inc({ method, route: 'unparsed', status: String(status) }),
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    // Handled with or without TLS: an unhandled SIGHUP would end the daemon.
    process.on('SIGHUP', this.onSighup);
    const addr = this.address();
    this.deps.logger.info({ host: addr.address, port: addr.port, tls: tls !== undefined, ...(tls ? this.certificateFacts(tls) : {}) }, 'HTTP API listening');
  }

  /**
   * Reads http.tls.cert_file and key_file again and serves them to new connections
   * (SIGHUP, e.g. after a certificate renewal). A broken pair is refused and logged; the
   * previous certificate stays in use. Returns whether the new pair is served.
   */
  reloadTls(): boolean {
    const tls = this.deps.config.http.tls;
    const server = this.server;
    if (!tls || !server || !('setSecureContext' in server)) {
      this.deps.logger.info('SIGHUP: http.tls is not set, nothing to reload here (chargers\' id tags reload in the central system; other settings need a restart)');
      return false;
    }
    try {
      server.setSecureContext({ ...readTlsFiles(tls), minVersion: 'TLSv1.2' });
    } catch (err) {
      this.deps.logger.error({ err: { message: (err as Error).message }, cert_file: tls.cert_file, key_file: tls.key_file }, 'HTTP TLS certificate not reloaded; the previous one stays in use');
      return false;
    }
    this.deps.logger.info(this.certificateFacts(tls), 'HTTP TLS certificate reloaded');
    return true;
  }

  /** What an operator checks after a renewal: which certificate, valid until when. */
  private certificateFacts(tls: TlsFiles): Record<string, string> {
    try {
      const cert = new X509Certificate(readFileSync(tls.cert_file));
      return { cert_subject: cert.subject.replace(/\n/g, ', '), cert_valid_to: new Date(cert.validTo).toISOString(), cert_sha256: cert.fingerprint256 };
    } catch {
      return {};
    }
  }

  /** The bound address (port 0 in config picks a free port; tests read it here). */
  address(): AddressInfo {
    if (!this.server) throw new Error('HTTP server is not started');
    return this.server.address() as AddressInfo;
  }

  /** Base URL for clients, e.g. `http://127.0.0.1:8080` (`https://` with http.tls). */
  url(): string {
    const { address, family, port } = this.address();
    return `${this.deps.config.http.tls ? 'https' : 'http'}://${family === 'IPv6' ? `[${address}]` : address}:${port}`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    process.off('SIGHUP', this.onSighup);
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // Keep-alive connections become idle once their last response is out; close them as
    // they do, rather than waiting for keepAliveTimeout.
    server.closeIdleConnections();
    const sweep = setInterval(() => server.closeIdleConnections(), 50);
    const grace = setTimeout(() => server.closeAllConnections(), this.options.shutdownGraceMs ?? 5_000);
    grace.unref();
    await closed;
    clearInterval(sweep);
    clearTimeout(grace);
  }
}
