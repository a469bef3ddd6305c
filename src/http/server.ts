// The HTTP server module: listens on config.http.host:port, stops gracefully (stops
// accepting, lets in-flight requests finish, closes idle keep-alive connections, and
// cuts whatever is left after a grace period).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Module } from '../lifecycle.js';
import { createApp, type HttpDeps, type RouteRegistrar, ROUTES } from './app.js';
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
  /** How often Node checks those limits (its default is 30 s; tests make it short). */
  readonly timeoutCheckIntervalMs?: number;
}

export class HttpServer implements Module {
  readonly name = 'http';
  private server?: Server;

  constructor(
    private readonly deps: HttpDeps,
    private readonly options: HttpServerOptions = {},
  ) {}

  async start(): Promise<void> {
    const { host, port } = this.deps.config.http;
    const headersTimeoutMs = this.options.headersTimeoutMs ?? 20_000;
    const requestTimeoutMs = this.options.requestTimeoutMs ?? 60_000;
    const server = createServer(
      {
        headersTimeout: headersTimeoutMs,
        requestTimeout: requestTimeoutMs,
        keepAliveTimeout: 5_000,
        // A request without Host is refused by the app, as problem+json (Node's own 400 has no body).
        requireHostHeader: false,
        ...(this.options.timeoutCheckIntervalMs ? { connectionsCheckingInterval: this.options.timeoutCheckIntervalMs } : {}),
      },
      createApp(this.deps, this.options.routes ?? ROUTES),
    );
    const requests = httpRequestsCounter(this.deps.metrics);
    answerClientErrors(server, {
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
    const addr = this.address();
    this.deps.logger.info({ host: addr.address, port: addr.port }, 'HTTP API listening');
  }

  /** The bound address (port 0 in config picks a free port; tests read it here). */
  address(): AddressInfo {
    if (!this.server) throw new Error('HTTP server is not started');
    return this.server.address() as AddressInfo;
  }

  /** Base URL for clients, e.g. `http://127.0.0.1:8080`. */
  url(): string {
    const { address, family, port } = this.address();
    return `http://${family === 'IPv6' ? `[${address}]` : address}:${port}`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
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
