// How chargers reach the central system (docs/chargers.md "Wiring a charger", "What the
// network can do"): ws:// (security profile 1: HTTP basic auth per charge point; off with
// ocpp.port: false) and, with ocpp.tls_port, wss:// (profile 2: TLS with the gateway's
// http.tls certificate plus basic auth; profile 3: a client certificate from
// ocpp.client_ca_file whose subject CN is the charge point id). Each charger's
// security_profile is the weakest connection it may use. Built on ocpp-rpc in strict
// mode, subprotocols ocpp1.6 and ocpp2.0.1 on the same ports: the charger's offer decides
// (its first choice), unless its ocpp_version pins one (handshake-guard.ts chooseSubprotocol).
// Every call is validated against the official JSON schemas of its version (1.6 with the
// bounds they leave out, validator.ts) before a handler sees it, and every answer of ours
// before it leaves.
//
// Error policy: whatever a peer sends at this level (a malformed upgrade, no subprotocol we speak, a
// refused handshake, a failed TLS handshake, an oversized frame, frames that are not
// OCPP-J, frames it does not read) is refused, or its connection closed, and counted and
// logged (warnings a peer can cause at will within a budget); the other connections and
// the process carry on. A handler's own error reaches
// the charger as a CallError without JavaScript internals (InternalError); the message
// handlers' CallErrors (schema, PropertyConstraintViolation) pass as they are.
// Authenticated clients are handed to onClient.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { TLSSocket } from 'node:tls';
import { Counter } from 'prom-client';
import { RPCServer, createRPCError } from './rpc.js';
import type { AppContext } from '../context.js';
import type { ChargerConfig } from '../config/types.js';
import { authorizationKeyForms } from './authorization-key.js';
import { CALLS_IN_FLIGHT } from './call-lanes.js';
import type { ChargerClient } from './charger-client.js';
import { AuthFailureThrottle, chooseSubprotocol, OCPP16, OCPP201, offersOurs, upgradeIdentity, type OcppSubprotocol } from './handshake-guard.js';
import { ocpp16StrictValidator, ocpp201StrictValidator } from './validator.js';
import { LogBudget } from '../log-budget.js';

/**
 * The largest frame a charger may send (ws maxPayload; larger: closed with 1009). The
 * largest OCPP 1.6 messages are StopTransaction with its transactionData and MeterValues:
 * one sampled value is at most ~170 bytes of JSON, so 1 MiB holds a 72-hour session's
 * 15-minute clock-aligned values with 8 measurands (288 × ~1.4 kB ≈ 400 kB) with room to
 * spare; the ws default was 100 MiB (docs/chargers.md).
 */
export const MAX_FRAME_BYTES = 1024 * 1024;
/**
 * What the gateway sent a charger that has not read it yet (socket.writableLength, beyond
 * the kernel's buffers): a frame about to go out — an answer, a call of the gateway's, a
 * CallError ocpp-rpc makes itself for a malformed frame — with more than this still
 * unsent closes the connection instead. Every frame: ocpp-rpc echoes a malformed call's
 * message id, so 200 frames with 900 kB ids from a charger that did not read grew the
 * daemon by 232 MB while the bound applied to answers to calls only.
 */
export const MAX_UNSENT_BYTES = 256 * 1024;
/**
 * Frames in a row that are not OCPP-J (not JSON, not an array, a bad message type, id or
 * action; an answer to no call of the gateway's, such as one after its call timed out):
 * one more and the connection is closed (ocpp-rpc's maxBadMessages; its default is no
 * limit). Any good frame starts the count again, so a charger that answers late now and
 * then is not cut off; one that sends nothing but garbage is.
 */
export const MAX_BAD_MESSAGES = 20;
/** Malformed-frame warnings over all connections: this many a minute, the rest counted (metergate_ocpp_malformed_frames_total). */
export const MALFORMED_WARNINGS = { perWindow: 10, windowMs: 60_000 } as const;
/**
 * Calls a charger may have sent and not had answered yet. OCPP-J 1.6 (4.1.1, synchronicity)
 * says a party sends its next call only after the previous one was answered, so a charger
 * keeping to it has one; beyond this bound it is flooding (each call costs a commit) and
 * the connection is closed, the calls still queued not handled.
 */
export const MAX_CALLS_IN_FLIGHT = 25;
/** Headers of an upgrade (and a TLS handshake) must arrive within this; slower peers are cut off. */
export const HANDSHAKE_TIMEOUT_MS = 10_000;
/** Open sockets per listener (chargers, handshakes under way, refused ones closing). */
export const MAX_CONNECTIONS = 256;
/** Failed handshakes per address: 10 at once, then one every 6 s (10 a minute); more get 429. */
export const AUTH_FAILURES = { burst: 10, refillMs: 6_000, maxAddresses: 4096 } as const;

/** The body of every refused handshake (unknown id, wrong or missing password, weaker than the charger's profile). */
export const REFUSED_BODY = 'unauthorized';

const sha256 = (s: string | Buffer) => createHash('sha256').update(s).digest();

/** ocpp-rpc's server-side client, as far as the transport uses it. */
interface RpcServerClient extends Omit<ChargerClient, 'protocol'> {
  readonly handshake: { readonly request: IncomingMessage };
  /** The subprotocol agreed at the handshake. */
  readonly protocol: string;
  /** Every frame the library sends to the charger goes through here. */
  sendRaw(message: string | Buffer): void;
}

/**
 * ocpp-rpc 2.2.1 (lib/client.js, "Workaround for some mistakes in the spec") renames
 * OccurenceConstraintViolation to OccurrenceConstraintViolation on ocpp1.6 connections — the
 * wrong way round: OCPP-J 1.6 Table 7 spells it OccurenceConstraintViolation, and the 1.6
 * errata (section 5, "won't fix") keeps that spelling (mobilityhouse/ocpp#381). A CallError
 * frame with the 2.1 spelling goes out with the 1.6 one; every other frame as it is.
 */
export function ocpp16CallErrorFrame(message: string | Buffer): string | Buffer {
  return callErrorCodeRespelled(message, 'OccurrenceConstraintViolation', 'OccurenceConstraintViolation');
}

/**
 * On ocpp2.0.1 ocpp-rpc leaves the validator's 1.6 spelling (OccurenceConstraintViolation,
 * validator.ts's keyword map, as ocpp-rpc's own); OCPP-J 2.0.1 (4.3, RPC framework error
 * codes) spells it OccurrenceConstraintViolation, so a CallError with the 1.6 spelling goes
 * out with the 2.0.1 one there.
 */
export function ocpp201CallErrorFrame(message: string | Buffer): string | Buffer {
  return callErrorCodeRespelled(message, 'OccurenceConstraintViolation', 'OccurrenceConstraintViolation');
}

function callErrorCodeRespelled(message: string | Buffer, from: string, to: string): string | Buffer {
  if (typeof message !== 'string' || !message.startsWith('[4,') || !message.includes(`"${from}"`)) return message;
  const frame = JSON.parse(message) as unknown[];
  if (frame[2] !== from) return message;
  frame[2] = to;
  return JSON.stringify(frame);
}

export class OcppTransport {
  private rpc?: RPCServer;
  private plain: Server | null = null;
  private secure: Server | null = null;
  private readonly throttle = new AuthFailureThrottle(AUTH_FAILURES);
  /** What an unknown id's password is compared with: random, a text key of the usual length (one form, as most keys). */
  private readonly unknownIdKey = randomBytes(24).toString('base64url');
  private refusals?: Counter<'reason'>;
  private malformed?: Counter<'charge_point_id'>;
  private readonly malformedWarnings = new LogBudget(MALFORMED_WARNINGS.perWindow, MALFORMED_WARNINGS.windowMs);

  constructor(
    private readonly ctx: Pick<AppContext, 'config' | 'logger' | 'metrics'>,
    private readonly chargers: ReadonlyMap<string, ChargerConfig>,
    /** An authenticated charger's new connection. */
    private readonly onClient: (client: ChargerClient) => void,
  ) {}

  async start(): Promise<void> {
    const { config, logger, metrics } = this.ctx;
    this.refusals = new Counter({
      name: 'metergate_ocpp_connections_refused_total',
      help: 'OCPP connections refused or closed by the transport, by reason (bad_url, no_subprotocol, throttled, unknown_id, unauthorized, weak_security, calls_not_awaited, unread_answers, bad_messages, upgrade_error)',
      labelNames: ['reason'] as const,
      registers: [metrics],
    });
    this.malformed = new Counter({
      name: 'metergate_ocpp_malformed_frames_total',
      help: 'Frames from a charger that are not OCPP-J (answered with a CallError by ocpp-rpc, or ignored when they answer nothing); the warnings in the log are limited, this counts every one',
      labelNames: ['charge_point_id'] as const,
      registers: [metrics],
    });
    // callConcurrency: one call per lane (call-lanes.ts), so a safety call goes out beside an
    // ordinary one instead of in ocpp-rpc's queue behind it (its default is 1).
    const rpc = new RPCServer({ protocols: [OCPP16, OCPP201], strictMode: true, strictModeValidators: [ocpp16StrictValidator(), ocpp201StrictValidator()], maxBadMessages: MAX_BAD_MESSAGES, callConcurrency: CALLS_IN_FLIGHT, wssOptions: { maxPayload: MAX_FRAME_BYTES } });
    this.rpc = rpc;
    // ws's server errors are re-emitted here; unheard, an 'error' event throws.
    rpc.on('error', (err: Error) => logger.warn({ err: { message: err.message } }, 'OCPP websocket server error'));
    rpc.auth((accept, reject, handshake) => {
      const remote = handshake.remoteAddress ?? 'unknown';
      // Every refusal gets the same answer (401, the same body): an unknown id answered
      // otherwise than a known one with a wrong password tells a LAN peer which ids exist.
      // Why it was refused is for the log and /metrics only.
      const refuse = (reason: 'unknown_id' | 'unauthorized' | 'weak_security', fields: Record<string, unknown>, message: string) => {
        this.throttle.failed(remote);
        this.refusals!.inc({ reason });
        logger.warn({ remote, ...fields }, message);
        reject(401, REFUSED_BODY);
      };
      // Authenticated: the subprotocol (after the credentials, so that a refusal here tells
      // nobody who is not the charger that its id exists).
      const agree = (chargePointId: string, setting: 'auto' | '1.6' | '2.0.1') => {
        const choice = chooseSubprotocol(handshake.protocols, setting);
        if ('refusal' in choice) {
          this.refusals!.inc({ reason: 'no_subprotocol' });
          logger.warn({ remote, charge_point_id: chargePointId, offered: [...handshake.protocols].slice(0, 8), ocpp_version: setting }, 'OCPP connection refused: the charger does not offer the subprotocol its ocpp_version pins');
          reject(400, choice.refusal);
          return;
        }
        accept({ chargePointId }, choice.subprotocol);
      };
      const charger = this.chargers.get(handshake.identity);
      // Compared for every id, known or not (an unknown one against a key nobody knows), so
      // the time to the answer does not tell an unknown id from a wrong password either.
      const passwordOk = passwordMatches(handshake.password, charger?.password ?? this.unknownIdKey);
      if (!charger) {
        refuse('unknown_id', { charge_point_id: handshake.identity.slice(0, 48) }, 'OCPP connection refused: unknown charge point id');
        return;
      }
      const tls = handshake.request.socket instanceof TLSSocket ? handshake.request.socket : null;
      if (charger.security_profile >= 2 && !tls) {
        refuse('weak_security', { charge_point_id: charger.id, security_profile: charger.security_profile }, 'OCPP connection refused: this charge point must connect over wss:// (its security_profile)');
        return;
      }
      if (charger.security_profile === 3) {
        const certified = tls !== null && tls.authorized && tls.getPeerCertificate().subject?.CN === charger.id;
        if (!certified) {
          const cn = tls?.authorized ? tls.getPeerCertificate().subject?.CN : undefined;
          refuse('weak_security', { charge_point_id: charger.id, certificate: tls?.authorized ? `CN ${String(cn).slice(0, 64)}` : 'none or not from ocpp.client_ca_file' }, 'OCPP connection refused: security profile 3 needs a client certificate from ocpp.client_ca_file with the charge point id as CN');
          return;
        }
        agree(charger.id, charger.ocpp_version ?? 'auto');
        return;
      }
      if (!passwordOk) {
        refuse('unauthorized', { charge_point_id: charger.id, password_sent: handshake.password !== undefined }, 'OCPP connection refused: wrong or missing password');
        return;
      }
      agree(charger.id, charger.ocpp_version ?? 'auto');
    });
    rpc.on('client', (lib: RpcServerClient) => this.connected(lib));

    const { host, port, tls_port: tlsPort } = config.ocpp;
    const timeouts = { headersTimeout: HANDSHAKE_TIMEOUT_MS, requestTimeout: HANDSHAKE_TIMEOUT_MS, connectionsCheckingInterval: 1_000 };
    if (port !== false) {
      const plain = createServer(timeouts, upgradeRequired);
      this.guard(plain);
      await listen(plain, port, host);
      this.plain = plain;
    }
    if (tlsPort !== undefined && config.http.tls) {
      const tls = config.http.tls;
      const clientCa = config.ocpp.client_ca_file;
      const secure = createTlsServer(
        {
          ...timeouts,
          handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
          cert: readFileSync(tls.cert_file, 'utf8'),
          key: readFileSync(tls.key_file, 'utf8'),
          minVersion: 'TLSv1.2',
          // Security profile 3: a certificate is asked for, and checked per charger in the
          // auth callback (profile 2 chargers connect without one).
          ...(clientCa ? { requestCert: true, rejectUnauthorized: false, ca: readFileSync(clientCa, 'utf8') } : {}),
        },
        upgradeRequired,
      );
      this.guard(secure);
      secure.on('tlsClientError', (err: NodeJS.ErrnoException) => logger.debug({ code: err.code }, 'OCPP TLS handshake failed'));
      await listen(secure, tlsPort, host);
      this.secure = secure;
    }
  }

  /** The bound ws:// port (ocpp.port 0 picks a free one); 0 with ocpp.port: false. */
  port(): number {
    return (this.plain?.address() as AddressInfo | null)?.port ?? 0;
  }

  /** The bound wss:// port, or null without ocpp.tls_port. */
  tlsPort(): number | null {
    return this.secure ? (this.secure.address() as AddressInfo).port : null;
  }

  async stop(): Promise<void> {
    await this.rpc?.close({ code: 1001, reason: 'gateway stopping', awaitPending: true });
    for (const server of [this.plain, this.secure]) {
      if (!server) continue;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    this.plain = this.secure = null;
  }

  /** Bounds and the upgrade guard of one listener. */
  private guard(server: Server): void {
    server.maxConnections = MAX_CONNECTIONS;
    // Before the upgrade completes (ws sets 0 on the upgraded socket).
    server.setTimeout(HANDSHAKE_TIMEOUT_MS);
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.upgrade(req, socket, head));
    // A peer that resets mid-request: its socket's error, nothing more.
    server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
      this.ctx.logger.debug({ code: err.code }, 'OCPP request refused by the HTTP parser');
      if (socket.writable && err.code !== 'ECONNRESET') socket.end(`HTTP/1.1 ${err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400} ${err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'Request Timeout' : 'Bad Request'}\r\nConnection: close\r\n\r\n`);
      socket.destroy();
    });
  }

  /**
   * Checked here before ocpp-rpc's handleUpgrade: it decodes the charge point id outside its
   * try and its returned promise is never awaited, so `GET /ocpp/%E0%A4%A` with an Upgrade
   * header was an unhandled rejection that ended the process (issue 20). No upstream issue
   * was found; the code: https://github.com/mikuso/ocpp-rpc/blob/042e695e4d3a4d024e5416f68025c8232ddfb1da/lib/server.js
   * (handleUpgrade, `decodeURIComponent(pathParts.pop())`). Its promise is caught as well.
   */
  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const { logger } = this.ctx;
    const remote = req.socket.remoteAddress ?? 'unknown';
    socket.on('error', (err: NodeJS.ErrnoException) => logger.debug({ remote, code: err.code }, 'OCPP socket error before the upgrade completed'));
    const refuse = (status: 400 | 429, reason: 'bad_url' | 'no_subprotocol' | 'throttled', message: string, headers: Record<string, string> = {}) => {
      this.refusals!.inc({ reason });
      logger.debug({ remote, status, reason }, 'OCPP upgrade refused');
      refuseUpgrade(socket, status, message, headers);
    };
    const target = upgradeIdentity(req.url);
    if ('status' in target) return refuse(target.status, 'bad_url', target.reason);
    // OCPP-J 1.6 (4.1.2), 2.0.1 (3.1.2): a server that does not agree on a subprotocol refuses the connection.
    if (!offersOurs(req.headers['sec-websocket-protocol'])) return refuse(400, 'no_subprotocol', `subprotocol ${OCPP16} or ${OCPP201} required (Sec-WebSocket-Protocol: ${OCPP16} or ${OCPP201})`);
    const waitMs = this.throttle.blockedForMs(remote);
    if (waitMs > 0) return refuse(429, 'throttled', 'too many failed handshakes from this address', { 'Retry-After': String(Math.ceil(waitMs / 1000)) });
    // An upgrade event's socket is the connection's net.Socket (a TLSSocket on wss://).
    this.rpc!.handleUpgrade(req, socket as Socket, head).catch((err: unknown) => {
      this.refusals!.inc({ reason: 'upgrade_error' });
      logger.warn({ remote, err: { message: err instanceof Error ? err.message : String(err) } }, 'OCPP upgrade failed');
      socket.destroy();
    });
  }

  /** An authenticated connection: every frame it is sent bounded, its handlers' errors kept to CallErrors, then handed on. */
  private connected(lib: RpcServerClient): void {
    const { logger } = this.ctx;
    const socket: Socket = lib.handshake.request.socket;
    // A charger that floods calls without waiting for the answers, or sends without reading
    // what it is sent: each call costs a commit and each frame its memory (1.14 M Heartbeats
    // in 20 s took 800 MB and starved the other chargers).
    let closing = false;
    let inFlight = 0;
    let badInARow = 0;
    let lastFrameGood = true;
    const shut = (reason: 'calls_not_awaited' | 'unread_answers' | 'bad_messages', message: string) => {
      if (closing) return;
      closing = true;
      this.refusals!.inc({ reason });
      logger.warn({ charge_point_id: lib.identity, calls_in_flight: inFlight, unsent_bytes: socket.writableLength, malformed_frames_in_a_row: badInARow }, message);
      void lib.close({ code: 1008, reason: reason.replaceAll('_', ' '), force: true }).catch(() => undefined);
      socket.destroy();
    };
    // Every frame the library sends goes through sendRaw: answers, the gateway's calls and
    // the CallErrors it makes itself for malformed frames. One that would pile up behind
    // unread ones closes the connection instead (a call of the gateway's then rejects).
    const sendRaw = lib.sendRaw.bind(lib);
    const protocol: OcppSubprotocol = lib.protocol === OCPP201 ? OCPP201 : OCPP16;
    const respell = protocol === OCPP201 ? ocpp201CallErrorFrame : ocpp16CallErrorFrame;
    lib.sendRaw = (message) => {
      if (closing) return;
      if (socket.writableLength > MAX_UNSENT_BYTES) {
        shut('unread_answers', 'OCPP connection closed: the charger does not read what the gateway sends it');
        return;
      }
      sendRaw(respell(message));
    };
    // ocpp-rpc counts malformed frames in a row the same way (a good one starts again): it
    // would close at MAX_BAD_MESSAGES too, politely, waiting for a peer that may not read.
    lib.on('message', ({ outbound }: { outbound: boolean }) => {
      if (outbound) return;
      if (lastFrameGood) badInARow = 0;
      lastFrameGood = true;
    });
    // A frame that is not OCPP-J: counted, warned about within the budget, the connection
    // kept until MAX_BAD_MESSAGES in a row. Its error can quote the frame's message id: cut.
    lib.on('badMessage', ({ buffer, error }: { buffer: Buffer; error: Error }) => {
      lastFrameGood = false;
      badInARow += 1;
      this.malformed!.inc({ charge_point_id: lib.identity });
      const { log, suppressedBefore } = this.malformedWarnings.take(Date.now());
      if (suppressedBefore > 0) logger.warn({ suppressed: suppressedBefore }, 'more malformed OCPP frames in the last minute: counted in metergate_ocpp_malformed_frames_total, not logged one by one');
      if (log) logger.warn({ charge_point_id: lib.identity, err: { message: error.message.slice(0, 200) }, bytes: buffer.length }, 'malformed OCPP frame ignored');
      if (badInARow > MAX_BAD_MESSAGES) shut('bad_messages', `OCPP connection closed: more than ${MAX_BAD_MESSAGES} frames in a row that are not OCPP-J`);
    });
    // A frame over MAX_FRAME_BYTES, a reset: ws closes the connection and says why here.
    lib.on('socketError', (err: Error) => logger.warn({ charge_point_id: lib.identity, err: { message: err.message } }, 'OCPP connection error; connection closed'));
    lib.on('call', ({ outbound }: { outbound: boolean }) => {
      if (outbound || closing) return;
      inFlight += 1;
      if (inFlight > MAX_CALLS_IN_FLIGHT) shut('calls_not_awaited', `OCPP connection closed: more than ${MAX_CALLS_IN_FLIGHT} calls sent without waiting for their answers (OCPP-J 4.1.1)`);
      // Not even handled: its answer could not be sent.
      else if (socket.writableLength > MAX_UNSENT_BYTES) shut('unread_answers', 'OCPP connection closed: the charger does not read what the gateway sends it');
    });
    lib.on('response', ({ outbound }: { outbound: boolean }) => {
      if (outbound) inFlight -= 1;
    });
    this.onClient(guardedClient(lib, protocol, () => closing, (action, err) => logger.error({ charge_point_id: lib.identity, action, err }, 'OCPP call failed inside the gateway; answered InternalError')));
  }
}

/**
 * The client the central system uses: the library's, with every handler's non-OCPP error
 * answered as InternalError, and no handler run for a call that arrives on a connection
 * being closed (the rest of a flood already read from the socket).
 */
function guardedClient(lib: RpcServerClient, protocol: OcppSubprotocol, closing: () => boolean, internal: (action: string, err: unknown) => void): ChargerClient {
  return {
    identity: lib.identity,
    protocol,
    handle: (method, handler) =>
      lib.handle(method, async (call) => {
        if (closing()) throw createRPCError('GenericError', 'connection closing');
        try {
          return await handler(call);
        } catch (err) {
          // CallErrors made on purpose (createRPCError) carry their code: passed on as they are.
          if (err instanceof Error && 'rpcErrorCode' in err) throw err;
          internal(method, err);
          throw createRPCError('InternalError', 'the central system could not handle this call; send it again later');
        }
      }),
    call: (method, params, opts) => lib.call(method, params, opts),
    on: (event, listener) => lib.on(event, listener),
    close: (opts) => lib.close(opts),
  };
}

/** The password a charger sent against its AuthorizationKey (either form, authorization-key.ts); compared as hashes: equal length, constant time. */
function passwordMatches(sent: Buffer | undefined, key: string | undefined): boolean {
  if (!sent || !key) return false;
  const got = sha256(sent);
  let match = false;
  for (const form of authorizationKeyForms(key)) match = timingSafeEqual(got, sha256(form)) || match;
  return match;
}

function refuseUpgrade(socket: Duplex, status: number, message: string, headers: Record<string, string>): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(message)}\r\n${extra}\r\n${message}`);
  socket.once('finish', () => socket.destroy());
}

/** A plain HTTP request (a browser, a port scan) gets an answer instead of hanging until it times out. */
function upgradeRequired(req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(426, { 'content-type': 'text/plain; charset=utf-8', upgrade: 'websocket', connection: 'close' });
  res.end('metergate OCPP 1.6J and 2.0.1 central system: connect a charger over a websocket (subprotocol ocpp1.6 or ocpp2.0.1) to this URL with its charge point id as the last path segment\n');
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
