// RFC 9457 problem details: every error the HTTP API sends is application/problem+json
// `{type, title, status, detail, errors?: [{path, message}]}`; never a stack trace.
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import { STATUS_CODES } from 'node:http';
import type { Logger } from '../log.js';
import { isStorageUnavailable } from '../store/storage-errors.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** One failing field: `path` names it the way a client writes it (`meter_readings[3].timestamp`). */
export interface FieldError {
  readonly path: string;
  readonly message: string;
}

export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly errors?: readonly FieldError[];
  /** A charger's CallError, as it came (the operator operations, routes/charger-operations.ts). */
  readonly ocpp_error?: { readonly code: string; readonly description: string; readonly details: unknown };
}

/** A short stable slug per status, so `type` is a URI clients can branch on. */
const TYPE_SLUGS: Record<number, string> = {
  400: 'bad-request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not-found',
  405: 'method-not-allowed',
  408: 'request-timeout',
  409: 'conflict',
  413: 'content-too-large',
  415: 'unsupported-media-type',
  417: 'expectation-failed',
  422: 'unprocessable-content',
  429: 'too-many-requests',
  431: 'request-header-fields-too-large',
  500: 'internal-error',
  502: 'bad-gateway',
  503: 'service-unavailable',
  504: 'gateway-timeout',
};

export function problemType(status: number): string {
  return `https://metergate.local/problems/${TYPE_SLUGS[status] ?? String(status)}`;
}

/** Thrown (or passed to next) anywhere in a handler; the error handler renders it. */
export class HttpProblem extends Error {
  readonly status: number;
  readonly title: string;
  readonly detail: string;
  readonly errors?: readonly FieldError[];
  readonly headers: Readonly<Record<string, string>>;
  readonly type: string;
  readonly ocppError?: Problem['ocpp_error'];

  constructor(status: number, detail: string, opts: { title?: string; errors?: readonly FieldError[]; headers?: Record<string, string>; type?: string; ocppError?: Problem['ocpp_error'] } = {}) {
    super(detail);
    this.name = 'HttpProblem';
    this.status = status;
    this.detail = detail;
    this.title = opts.title ?? STATUS_CODES[status] ?? 'Error';
    this.errors = opts.errors && opts.errors.length > 0 ? opts.errors : undefined;
    this.headers = opts.headers ?? {};
    this.type = opts.type ?? problemType(status);
    this.ocppError = opts.ocppError;
  }

  toJSON(): Problem {
    return {
      type: this.type,
      title: this.title,
      status: this.status,
      detail: this.detail,
      ...(this.errors ? { errors: this.errors } : {}),
      ...(this.ocppError ? { ocpp_error: this.ocppError } : {}),
    };
  }
}

export function sendProblem(res: Response, problem: HttpProblem): void {
  if (res.headersSent) return;
  for (const [name, value] of Object.entries(problem.headers)) res.setHeader(name, value);
  res.status(problem.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem.toJSON()));
}

/** 404 for every path no route claimed. */
export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(new HttpProblem(404, `no resource at ${req.method} ${req.path}`));
};

/**
 * A route that exists for other methods answers 405 with `Allow`, not 404.
 * Mount after the route's handlers: `router.all(path, methodNotAllowed(['GET']))`.
 */
export function methodNotAllowed(allowed: readonly string[]): RequestHandler {
  return (req, _res, next) => {
    next(new HttpProblem(405, `${req.method} is not allowed here; use ${allowed.join(' or ')}`, { headers: { Allow: allowed.join(', ') } }));
  };
}

interface BodyParserError {
  type?: string;
  status?: number;
  statusCode?: number;
  expose?: boolean;
  limit?: number;
  charset?: string;
  encoding?: string;
  message?: string;
  /** The decoded body, on a parse failure. */
  body?: unknown;
}

/** What JSON.parse makes of `text`, or undefined when it is not JSON at all. */
function parsedJson(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}

function jsonTypeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/** Maps errors thrown by express's body parsers (body-parser 2) to problems. */
function fromBodyParserError(err: BodyParserError): HttpProblem | undefined {
  switch (err.type) {
    case 'entity.parse.failed': {
      // The parser is strict (objects and arrays only): `null`, `42` or `"x"` are valid
      // JSON of the wrong type, a schema error (422) like any other, not broken JSON.
      const valid = typeof err.body === 'string' ? parsedJson(err.body) : undefined;
      if (valid) return new HttpProblem(422, `the request body is valid JSON but ${jsonTypeName(valid.value)}; it must be a JSON object`, { errors: [{ path: '(body)', message: 'must be object' }] });
      return new HttpProblem(400, `request body is not valid JSON: ${String(err.message ?? '').slice(0, 200)}`, { errors: [{ path: '(body)', message: 'is not valid JSON' }] });
    }
    case 'entity.too.large':
      return new HttpProblem(413, `request body is larger than the limit of ${err.limit ?? '?'} bytes`, { errors: [{ path: '(body)', message: `must be at most ${err.limit ?? '?'} bytes` }] });
    case 'encoding.unsupported':
      return new HttpProblem(415, `content encoding "${err.encoding ?? '?'}" is not supported; send identity, gzip or deflate`);
    case 'charset.unsupported':
      return new HttpProblem(415, `charset "${err.charset ?? '?'}" is not supported; send UTF-8 JSON`);
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
    case 'stream.not.readable':
      return new HttpProblem(400, 'the request body could not be read');
    default:
      return undefined;
  }
}

/**
 * The last middleware: renders HttpProblem and body-parser errors; anything else is a
 * bug, logged with its stack and answered 500 without details.
 */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    if (err instanceof HttpProblem) {
      sendProblem(res, err);
      return;
    }
    const parsed = typeof err === 'object' && err !== null ? fromBodyParserError(err as BodyParserError) : undefined;
    if (parsed) {
      sendProblem(res, parsed);
      return;
    }
    const status = typeof err === 'object' && err !== null ? ((err as BodyParserError).status ?? (err as BodyParserError).statusCode) : undefined;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      // http-errors from express internals (e.g. a malformed URI component -> 400).
      sendProblem(res, new HttpProblem(status, (err as BodyParserError).expose ? String((err as BodyParserError).message) : (STATUS_CODES[status] ?? 'client error')));
      return;
    }
    if (isStorageUnavailable(err)) {
      // Disk full, I/O error, or another process holding the lock past the daemon's short busy timeout: not a bug, try again.
      logger.warn({ err: err.message, code: err.code, method: req.method, url: req.originalUrl }, 'database cannot take the request now');
      sendProblem(res, new HttpProblem(503, `the database cannot take this request now (${err.code}); try again`, { headers: { 'Retry-After': '1' } }));
      return;
    }
    logger.error({ err, method: req.method, url: req.originalUrl }, 'unexpected error in HTTP handler');
    sendProblem(res, new HttpProblem(500, 'an unexpected error occurred; it has been logged'));
  };
}

/**
 * Requires a JSON body: 415 when a body comes with another media type (or none) or a
 * charset other than UTF-8, 400 when no body came at all. Mount before express.json() output is used.
 */
export const requireJsonBody: RequestHandler = (req, _res, next) => {
  const length = req.headers['content-length'];
  const hasBody = req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
  if (!hasBody) {
    next(new HttpProblem(400, 'a JSON request body is required', { errors: [{ path: '(body)', message: 'is required' }] }));
    return;
  }
  if (!req.is(['application/json', 'application/*+json'])) {
    const type = req.headers['content-type'];
    next(new HttpProblem(415, type ? `content type "${String(type).slice(0, 100)}" is not supported; send application/json` : 'the request body has no Content-Type; send application/json', { headers: { 'Accept-Post': 'application/json' } }));
    return;
  }
  // Only UTF-8 is documented; the JSON parser would also decode UTF-16 and others.
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(req.headers['content-type'] ?? '')?.[1];
  if (charset !== undefined && charset.toLowerCase() !== 'utf-8') {
    next(new HttpProblem(415, `charset "${charset.slice(0, 40)}" is not supported; send UTF-8 JSON (charset=utf-8 or none)`, { errors: [{ path: 'Content-Type', message: 'charset must be utf-8' }] }));
    return;
  }
  next();
};
