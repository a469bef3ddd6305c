// Requests Node's HTTP layer answers before express sees them: parser errors (bad framing,
// headers over the 16 KB limit), timeouts, CONNECT and an unsupported `Expect`. Node would
// answer those with an empty body or close the socket without a byte; here they get the
// same application/problem+json as every other error, written raw on the socket.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from '../log.js';
import { HttpProblem, PROBLEM_CONTENT_TYPE } from './errors.js';

/** What Node passes to 'clientError': an llhttp error (`HPE_*`) or a timeout. */
interface ClientError extends Error {
  readonly code?: string;
  /** llhttp's fixed description ("Invalid method encountered"), never client data. */
  readonly reason?: string;
}

/** Methods some route of this API serves: the `Allow` of a 405 for CONNECT. */
const SERVED_METHODS = 'GET, HEAD, POST, PUT';

/** The server's time limits, named in a 408. */
export interface RequestTimeouts {
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
}

/** The problem for a request Node's parser refused, by the llhttp code. */
export function clientErrorProblem(err: ClientError, timeouts: RequestTimeouts): HttpProblem {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new HttpProblem(431, 'the request line and headers are larger than 16 KB');
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new HttpProblem(413, 'the chunk extensions of the request body are too large');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new HttpProblem(408, `the request did not arrive in time (headers within ${timeouts.headersTimeoutMs / 1000} s, the whole request within ${timeouts.requestTimeoutMs / 1000} s)`);
    case 'HPE_PAUSED_H2_UPGRADE':
      return new HttpProblem(400, 'HTTP/2 is not supported; use HTTP/1.1');
    default: {
      const reason = typeof err.reason === 'string' && /^[\x20-\x7e]{1,100}$/.test(err.reason) ? err.reason : 'malformed request';
      return new HttpProblem(400, `the request is not valid HTTP/1.1: ${reason}`);
    }
  }
}

/** A complete HTTP/1.1 response for `problem` that closes the connection. */
export function rawProblemResponse(problem: HttpProblem): string {
  const body = JSON.stringify(problem.toJSON());
  const lines = [
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status] ?? 'Error'}`,
    `Content-Type: ${PROBLEM_CONTENT_TYPE}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Cache-Control: no-store',
    'X-Content-Type-Options: nosniff',
    'Connection: close',
    ...Object.entries(problem.headers).map(([name, value]) => `${name}: ${value}`),
  ];
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

/** Counts the requests answered here in metergate_http_requests_total (route "unparsed"). */
export type CountAnswer = (method: string, status: number) => void;

/**
 * Wires 'clientError', 'connect' and 'checkExpectation' on a node:http or node:https
 * server. The raw packet of a refused request may hold a token: it is never logged.
 */
export function answerClientErrors(server: Server, opts: RequestTimeouts & { readonly logger: Logger; readonly count: CountAnswer }): void {
  const { logger, count } = opts;
  server.on('clientError', (err: ClientError, socket: Duplex) => {
    // Same guard as Node's own handler (lib/_http_server.js socketOnError): never write
    // into a response that has started, nor on a socket the peer has reset.
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const problem = clientErrorProblem(err, opts);
    logger.debug({ code: err.code, status: problem.status }, 'http request refused by the parser');
    count('OTHER', problem.status);
    socket.end(rawProblemResponse(problem));
    // end() only half-closes (an http server allows half-open sockets): a slow-loris client
    // that keeps trickling bytes would keep the socket. Closed once the answer is out.
    socket.once('finish', () => socket.destroy());
  });

  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => socket.destroy());
    const problem = new HttpProblem(405, 'CONNECT is not supported: metergate is not a proxy', { headers: { Allow: SERVED_METHODS } });
    count('OTHER', problem.status);
    logger.debug({ method: req.method, status: problem.status }, 'http CONNECT refused');
    socket.end(rawProblemResponse(problem));
  });

  // Node answers an `Expect` other than 100-continue with a bare 417 unless this is handled.
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) => {
    const problem = new HttpProblem(417, 'the Expect header is not supported; only "100-continue" is');
    const body = JSON.stringify(problem.toJSON());
    count('OTHER', problem.status);
    res.writeHead(problem.status, { 'Content-Type': PROBLEM_CONTENT_TYPE, 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff', Connection: 'close' });
    res.end(body);
  });
}
