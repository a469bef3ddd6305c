// How chargers reach the central system (docs/chargers.md "Wiring a charger"): ws://
// (security profile 1: HTTP basic auth per charge point) and, with ocpp.tls_port, wss://
// (profile 2: TLS with the gateway's http.tls certificate, plus basic auth). Built on
// ocpp-rpc in strict mode: every call is validated against the official OCPP 1.6 JSON
// schemas before a handler sees it (a call that fails gets the protocol's CallError from
// the library) and every answer of ours before it leaves.
//
// Error policy: whatever a peer sends at this level (a refused handshake, a failed TLS
// handshake, a frame that is not OCPP-J) is refused or ignored and logged; the connection
// and the process carry on. Authenticated clients are handed to onClient.
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { RPCServer } from 'ocpp-rpc';
import type { AppContext } from '../context.js';
import type { ChargerConfig } from '../config/types.js';
import type { ChargerClient } from './charger-client.js';

const sha256 = (s: string | Buffer) => createHash('sha256').update(s).digest();

export class OcppTransport {
  private rpc?: RPCServer;
  private readonly servers: Server[] = [];

  constructor(
    private readonly ctx: Pick<AppContext, 'config' | 'logger'>,
    private readonly chargers: ReadonlyMap<string, ChargerConfig>,
    /** An authenticated charger's new connection. */
    private readonly onClient: (client: ChargerClient) => void,
  ) {}

  async start(): Promise<void> {
    const { config, logger } = this.ctx;
    const rpc = new RPCServer({ protocols: ['ocpp1.6'], strictMode: true });
    this.rpc = rpc;
    rpc.auth((accept, reject, handshake) => {
      const charger = this.chargers.get(handshake.identity);
      if (!charger) {
        logger.warn({ charge_point_id: handshake.identity.slice(0, 48), remote: handshake.remoteAddress }, 'OCPP connection refused: unknown charge point id');
        reject(404, 'unknown charge point');
        return;
      }
      // Compared as hashes: equal length, constant time.
      if (!handshake.password || !charger.password || !timingSafeEqual(sha256(handshake.password), sha256(charger.password))) {
        logger.warn({ charge_point_id: charger.id, remote: handshake.remoteAddress, password_sent: handshake.password !== undefined }, 'OCPP connection refused: wrong or missing password');
        reject(401, 'unauthorized');
        return;
      }
      accept({ chargePointId: charger.id });
    });
    rpc.on('client', (client: ChargerClient) => {
      // A frame that is not OCPP-J at all: logged, the connection kept (maxBadMessages is unbounded).
      client.on('badMessage', ({ buffer, error }: { buffer: Buffer; error: Error }) => {
        logger.warn({ charge_point_id: client.identity, err: { message: error.message }, bytes: buffer.length }, 'malformed OCPP frame ignored');
      });
      this.onClient(client);
    });

    const { host, port, tls_port: tlsPort } = config.ocpp;
    const plain = createServer(upgradeRequired);
    plain.on('upgrade', rpc.handleUpgrade);
    await listen(plain, port, host);
    this.servers.push(plain);
    if (tlsPort !== undefined && config.http.tls) {
      const tls = config.http.tls;
      const secure = createTlsServer({ cert: readFileSync(tls.cert_file, 'utf8'), key: readFileSync(tls.key_file, 'utf8'), minVersion: 'TLSv1.2' }, upgradeRequired);
      secure.on('upgrade', rpc.handleUpgrade);
      secure.on('tlsClientError', (err: NodeJS.ErrnoException) => logger.debug({ code: err.code }, 'OCPP TLS handshake failed'));
      await listen(secure, tlsPort, host);
      this.servers.push(secure);
    }
  }

  /** The bound ws:// port (ocpp.port 0 picks a free one). */
  port(): number {
    return (this.servers[0]?.address() as AddressInfo | null)?.port ?? 0;
  }

  /** The bound wss:// port, or null without ocpp.tls_port. */
  tlsPort(): number | null {
    return this.servers[1] ? (this.servers[1].address() as AddressInfo).port : null;
  }

  async stop(): Promise<void> {
    await this.rpc?.close({ code: 1001, reason: 'gateway stopping', awaitPending: true });
    for (const server of this.servers.splice(0)) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }
}

/** A plain HTTP request (a browser, a port scan) gets an answer instead of hanging until it times out. */
function upgradeRequired(req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(426, { 'content-type': 'text/plain; charset=utf-8', upgrade: 'websocket', connection: 'close' });
  res.end('metergate OCPP 1.6J central system: connect a charger over a websocket (subprotocol ocpp1.6) to this URL with its charge point id as the last path segment\n');
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
