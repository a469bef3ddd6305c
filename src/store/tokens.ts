// API tokens: `mg_<id>_<secret>`. The id is public (listed, used to revoke); only the
// SHA-256 of the 32-byte random secret is stored, and it is compared in constant time.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db } from './db.js';

export const TOKEN_TYPES = ['cdrs', 'price_forecast', 'cpo'] as const;
export type TokenType = (typeof TOKEN_TYPES)[number];

export interface TokenInfo {
  readonly id: string;
  readonly name: string;
  readonly type: TokenType;
  readonly createdAtMs: number;
  readonly revokedAtMs: number | null;
}

interface TokenRow {
  id: string;
  name: string;
  type: TokenType;
  secret_sha256: Buffer;
  created_at_ms: number;
  revoked_at_ms: number | null;
}

const TOKEN_PATTERN = /^mg_([a-z0-9]{10})_([A-Za-z0-9_-]{43})$/;

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

function toInfo(row: TokenRow): TokenInfo {
  return { id: row.id, name: row.name, type: row.type, createdAtMs: row.created_at_ms, revokedAtMs: row.revoked_at_ms };
}

export function isTokenType(value: string): value is TokenType {
  return (TOKEN_TYPES as readonly string[]).includes(value);
}

export class TokenStore {
  private readonly byId;
  constructor(private readonly db: Db) {
    this.byId = db.prepare<[string], TokenRow>('SELECT * FROM api_tokens WHERE id = ?');
  }

  /** Creates a token; the returned `token` is the only time the secret exists in clear. */
  create(input: { name: string; type: TokenType; nowMs: number }): { token: string; info: TokenInfo } {
    const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
    const id = Array.from(randomBytes(10), (b) => alphabet[b % alphabet.length]).join('');
    const secret = randomBytes(32).toString('base64url');
    this.db
      .prepare('INSERT INTO api_tokens (id, name, type, secret_sha256, created_at_ms) VALUES (?, ?, ?, ?, ?)')
      .run(id, input.name, input.type, sha256(secret), input.nowMs);
    return { token: `mg_${id}_${secret}`, info: { id, name: input.name, type: input.type, createdAtMs: input.nowMs, revokedAtMs: null } };
  }

  list(): TokenInfo[] {
    return (this.db.prepare('SELECT * FROM api_tokens ORDER BY created_at_ms, id').all() as TokenRow[]).map(toInfo);
  }

  /** Revokes by id or name; returns how many tokens were revoked. */
  revoke(idOrName: string, nowMs: number): number {
    return this.db
      .prepare('UPDATE api_tokens SET revoked_at_ms = ? WHERE (id = ? OR name = ?) AND revoked_at_ms IS NULL')
      .run(nowMs, idOrName, idOrName).changes;
  }

  /** The live token a presented secret belongs to, or undefined (unknown, malformed or revoked). */
  verify(presented: string): TokenInfo | undefined {
    const m = TOKEN_PATTERN.exec(presented);
    // Hash even when the shape is wrong, so a bad token costs the same as a good one.
    const digest = sha256(m ? m[2] : presented);
    if (!m) return undefined;
    const row = this.byId.get(m[1]);
    if (!row || !timingSafeEqual(digest, row.secret_sha256) || row.revoked_at_ms !== null) return undefined;
    return toInfo(row);
  }
}
