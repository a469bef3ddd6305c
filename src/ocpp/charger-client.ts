// What the central system's parts share about a connected charger: the ocpp-rpc client as
// we use it, and the per-charger connection state the views read.

/** What an ocpp-rpc server-side client is to us (its typings are loose). */
export interface ChargerClient {
  readonly identity: string;
  handle(method: string, handler: (call: { params: unknown; messageId: string }) => unknown): void;
  call(method: string, params: unknown, opts?: { callTimeoutMs?: number; signal?: AbortSignal }): Promise<unknown>;
  on(event: string, listener: (...args: never[]) => void): void;
  close(opts?: { code?: number; reason?: string; force?: boolean }): Promise<unknown>;
}

export interface ChargerState {
  connected: boolean;
  /** The charger's current connection; a new one replaces (and closes) an older one. */
  client: ChargerClient | null;
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
