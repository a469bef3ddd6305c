// What an OCPP websocket upgrade must be before ocpp-rpc sees it (pure, but for the
// throttle's memory): a path whose last segment decodes to a charge point id, a
// subprotocol we speak (`ocpp1.6`, `ocpp2.0.1`) offered, and an address that has not failed to authenticate too
// often. The transport (transport.ts) refuses anything else at the handshake.

/** Longer request targets are refused (400): a charge point id is at most 48 characters, its URL a few dozen more. */
export const MAX_UPGRADE_URL_BYTES = 1024;
/** The subprotocols spoken: OCPP-J requires the server to refuse a connection that does not agree on one. */
export const OCPP16 = 'ocpp1.6';
export const OCPP201 = 'ocpp2.0.1';
export type OcppSubprotocol = typeof OCPP16 | typeof OCPP201;
/** A charger's setting (chargers[].ocpp_version): auto takes what it offers. */
export type OcppVersionSetting = 'auto' | '1.6' | '2.0.1';

const SUBPROTOCOL_OF = { '1.6': OCPP16, '2.0.1': OCPP201 } as const;

export type Refusal = { readonly status: 400 | 429; readonly reason: string };

/**
 * The charge point id of an upgrade's URL, taken exactly as ocpp-rpc takes it (the last
 * path segment, percent-decoded), or why it cannot be. ocpp-rpc 2.2.1 decodes it outside
 * its try and never awaits the rejection (`GET /ocpp/%E0%A4%A` ended the process), so the
 * transport asks here first; see transport.ts.
 */
export function upgradeIdentity(url: string | undefined): { readonly identity: string } | Refusal {
  const target = url || '/';
  if (Buffer.byteLength(target) > MAX_UPGRADE_URL_BYTES) return { status: 400, reason: `URL longer than ${MAX_UPGRADE_URL_BYTES} bytes` };
  try {
    const segment = new URL(`http://localhost${target}`).pathname.split('/').pop() ?? '';
    return { identity: decodeURIComponent(segment) };
  } catch {
    return { status: 400, reason: 'URL or its charge point id is not valid percent-encoding' };
  }
}

/** The subprotocols a Sec-WebSocket-Protocol header offers, in the client's order. */
export function offeredSubprotocols(header: string | string[] | undefined): string[] {
  const values = Array.isArray(header) ? header : header === undefined ? [] : [header];
  return values.flatMap((v) => v.split(',').map((p) => p.trim())).filter((p) => p !== '');
}

/** Whether the header offers a subprotocol we speak (checked before the charger is known). */
export function offersOurs(header: string | string[] | undefined): boolean {
  return offeredSubprotocols(header).some((p) => p === OCPP16 || p === OCPP201);
}

/**
 * The subprotocol a charger's connection speaks: its pinned one if it offers it, else
 * (auto) the first of its offer we speak (a client lists them by preference, RFC 6455
 * 4.1), or why none. A charger offering both on auto gets its own first choice.
 */
export function chooseSubprotocol(offered: Iterable<string>, setting: OcppVersionSetting): { readonly subprotocol: OcppSubprotocol } | { readonly refusal: string } {
  const list = [...offered];
  if (setting !== 'auto') {
    const pinned = SUBPROTOCOL_OF[setting];
    return list.includes(pinned) ? { subprotocol: pinned } : { refusal: `subprotocol ${pinned} required for this charge point (its ocpp_version)` };
  }
  const first = list.find((p): p is OcppSubprotocol => p === OCPP16 || p === OCPP201);
  return first ? { subprotocol: first } : { refusal: `subprotocol ${OCPP16} or ${OCPP201} required` };
}

/**
 * Failed handshakes (unknown id, wrong or missing password, a connection weaker than the
 * charger's security profile) per remote address: `burst` at once, then one more every
 * `refillMs`. An address without any left is refused (429) before its credentials are
 * looked at, so guessing runs at `60_000 / refillMs` tries a minute. Bounded memory: at
 * most `maxAddresses` are remembered, the least recently failed forgotten first.
 */
export class AuthFailureThrottle {
  private readonly failures = new Map<string, { tokens: number; atMs: number }>();

  constructor(
    private readonly opts: { readonly burst: number; readonly refillMs: number; readonly maxAddresses: number },
    private readonly nowMs: () => number = Date.now,
  ) {}

  /** Milliseconds until the address may try again (0: it may now). */
  blockedForMs(address: string): number {
    const entry = this.refilled(address);
    return entry === null || entry.tokens >= 1 ? 0 : Math.ceil((1 - entry.tokens) * this.opts.refillMs);
  }

  failed(address: string): void {
    const entry = this.refilled(address) ?? { tokens: this.opts.burst, atMs: this.nowMs() };
    entry.tokens = Math.max(0, entry.tokens - 1);
    // Re-inserted: a Map keeps insertion order, so the first key is the least recently failed.
    this.failures.delete(address);
    this.failures.set(address, entry);
    if (this.failures.size > this.opts.maxAddresses) this.failures.delete(this.failures.keys().next().value!);
  }

  private refilled(address: string): { tokens: number; atMs: number } | null {
    const entry = this.failures.get(address);
    if (!entry) return null;
    const now = this.nowMs();
    entry.tokens = Math.min(this.opts.burst, entry.tokens + Math.max(0, now - entry.atMs) / this.opts.refillMs);
    entry.atMs = now;
    if (entry.tokens >= this.opts.burst) {
      this.failures.delete(address);
      return null;
    }
    return entry;
  }
}
