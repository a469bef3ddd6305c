// What the central system's parts share about a connected charger: the ocpp-rpc client as
// we use it, and the per-charger connection state the views read.
import type { LanedChargerClient } from './call-lanes.js';

/**
 * Which lane a call of the gateway's takes on its charger's connection (call-lanes.ts):
 * 'safety' for the calls that put a connector's limit in force or keep it there (they never
 * wait behind an ordinary call), 'ordinary' (the default) for every other.
 */
export type CallLane = 'safety' | 'ordinary';

export interface CallOptions {
  readonly callTimeoutMs?: number;
  readonly signal?: AbortSignal;
  /** Honoured by the connection's laned client (call-lanes.ts); the library's own client ignores it. */
  readonly lane?: CallLane;
}

/** What an ocpp-rpc server-side client is to us (its typings are loose). */
export interface ChargerClient {
  readonly identity: string;
  /** The subprotocol agreed at the handshake (transport.ts): which handlers its calls get. */
  readonly protocol: 'ocpp1.6' | 'ocpp2.0.1';
  handle(method: string, handler: (call: { params: unknown; messageId: string }) => unknown): void;
  call(method: string, params: unknown, opts?: CallOptions): Promise<unknown>;
  on(event: string, listener: (...args: never[]) => void): void;
  close(opts?: { code?: number; reason?: string; force?: boolean }): Promise<unknown>;
}

export interface ChargerState {
  connected: boolean;
  /** The charger's current connection (its calls in lanes, call-lanes.ts); a new one replaces (and closes) an older one. */
  client: LanedChargerClient | null;
  connectedSinceMs: number | null;
  lastMessageAtMs: number | null;
  /** How far ahead of the gateway's clock the charger's last timestamp ahead was (ms), or null while none was. */
  clockAheadMs: number | null;
  /** The charger's clock offset (stamp - gateway time, ms) while it is known to be off, else null (charger-clock.ts). */
  clockOffsetMs?: number | null;
  /** Why its clock is off, while it is; its transactions are flagged with it. */
  clockProblem?: string | null;
  /** The first message of the current run behind by one offset (charger-clock.ts judgeChargerClock). */
  clockAnchor?: { readonly receivedAtMs: number; readonly stampedAtMs: number } | null;
  /** When it last sent BootNotification on this connection (gateway time): its connectors' Available then closes what it lost. */
  bootedAtMs?: number | null;
}
