// Token auth for the HTTP API. The contract fixes the scheme per endpoint
// (`Token` for /cdrs, `Bearer` for market_price_forecast); we add the token type.
import type { RequestHandler } from 'express';
import type { TokenInfo, TokenStore, TokenType } from '../store/tokens.js';
import { HttpProblem } from './errors.js';

export type AuthScheme = 'Token' | 'Bearer';

export interface AuthOptions {
  readonly scheme: AuthScheme;
  readonly type: TokenType;
}

export interface AuthDeps {
  readonly tokens: TokenStore;
}

declare module 'express-serve-static-core' {
  interface Request {
    /** The verified token of this request, set by requireToken(). */
    apiToken?: TokenInfo;
  }
}

function unauthorized(scheme: AuthScheme, detail: string, error?: 'invalid_token' | 'invalid_request'): HttpProblem {
  const challenge = `${scheme} realm="metergate"${error ? `, error="${error}"` : ''}`;
  return new HttpProblem(401, detail, { headers: { 'WWW-Authenticate': challenge }, errors: [{ path: 'Authorization', message: detail }] });
}

/**
 * Middleware factory: missing/unknown token or the wrong scheme -> 401 with
 * `WWW-Authenticate: <Scheme> realm="metergate"`; a valid token of another type -> 403.
 * The token itself never reaches a log or a problem body.
 */
export function requireToken(deps: AuthDeps, opts: AuthOptions): RequestHandler {
  const expected = opts.scheme.toLowerCase();
  return (req, _res, next) => {
    const header = req.headers.authorization;
    if (header === undefined || header.trim() === '') {
      next(unauthorized(opts.scheme, `an Authorization: ${opts.scheme} <token> header is required`));
      return;
    }
    const match = /^([A-Za-z][A-Za-z0-9_-]*)[ \t]+(\S+)[ \t]*$/.exec(header);
    if (!match) {
      next(unauthorized(opts.scheme, `the Authorization header must be "${opts.scheme} <token>"`, 'invalid_request'));
      return;
    }
    // Auth schemes are case-insensitive (RFC 9110 section 11.1).
    if (match[1].toLowerCase() !== expected) {
      next(unauthorized(opts.scheme, `this endpoint takes the ${opts.scheme} scheme, not ${match[1].slice(0, 20)}`, 'invalid_request'));
      return;
    }
    const token = deps.tokens.verify(match[2]);
    if (!token) {
      next(unauthorized(opts.scheme, 'the token is unknown or revoked', 'invalid_token'));
      return;
    }
    if (token.type !== opts.type) {
      next(new HttpProblem(403, `this endpoint needs a token of type ${opts.type}; this token is of type ${token.type}`));
      return;
    }
    req.apiToken = token;
    next();
  };
}
