// The gateway's calls to one charger connection go in two lanes (docs/chargers.md "Safety
// first on the wire"), so that a call protecting the site fuse never waits behind an
// operator's GetConfiguration or DataTransfer that a busy charger takes 30 s to answer:
//   ordinary  every call by default: at most one in flight, the rest waiting here in order
//             (FIFO), never in ocpp-rpc's own queue, where they would sit ahead of a safety call;
//   safety    the calls that put a connector's limit in force or keep it there
//             (SetChargingProfile, the clears of the gateway's own profiles, RemoteStop/Start
//             of the remote-start-stop strategy, the fuse's ChangeAvailability): at most one in
//             flight, the next waiting only for the previous safety call, never for an ordinary one.
// So at most two calls of ours are outstanding on a connection, one per lane: ocpp-rpc's
// callConcurrency is set to CALLS_IN_FLIGHT (transport.ts), and its queue never holds a call.
// Calls of one lane reach the charger in the order they were made; the two lanes are not
// ordered against each other.
//
// A call whose AbortSignal fires while it waits here is dropped (never sent) and rejects
// with an AbortError; ocpp-rpc itself only listens to the signal once a call is sent, so a
// call it queued and the caller gave up on went out anyway.
import type { CallLane, CallOptions, ChargerClient } from './charger-client.js';

/** Calls of the gateway's outstanding on one connection at most: one per lane (ocpp-rpc's callConcurrency). */
export const CALLS_IN_FLIGHT = 2;

/** A charger connection's client with its calls in lanes: what every part of the central system uses. */
export interface LanedChargerClient extends ChargerClient {
  /** The action of the safety call in flight or waiting for its lane, or null while none is. */
  safetyCallPending(): string | null;
  /**
   * Resolves once no safety call is pending (null), or after `waitMs` with the action still
   * pending: an operator's call waits that long for a fuse-protecting call before it is refused.
   */
  safetyCallSettled(waitMs: number): Promise<string | null>;
}

interface Waiting {
  readonly action: string;
  readonly start: () => void;
}

/** One lane of one connection: one call in flight, the rest in order. */
class Lane {
  private inFlight: string | null = null;
  private readonly waiting: Waiting[] = [];
  /** Told when the lane has nothing in flight or waiting. */
  private readonly idle: Array<() => void> = [];

  /** Resolves with null once the lane is idle, or with what is pending after waitMs. */
  settled(waitMs: number): Promise<string | null> {
    if (this.pending() === null) return Promise.resolve(null);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        resolve(null);
      };
      const timer = setTimeout(() => {
        const at = this.idle.indexOf(done);
        if (at >= 0) this.idle.splice(at, 1);
        resolve(this.pending());
      }, waitMs);
      this.idle.push(done);
    });
  }

  /** The action in flight, else the first waiting, else null. */
  pending(): string | null {
    return this.inFlight ?? this.waiting[0]?.action ?? null;
  }

  run<T>(action: string, send: () => Promise<T>, signal: AbortSignal | undefined): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (signal?.aborted) {
        reject(abortError(signal));
        return;
      }
      const onAbort = () => {
        const at = this.waiting.indexOf(job);
        if (at < 0) return;
        this.waiting.splice(at, 1);
        reject(abortError(signal!));
      };
      const job: Waiting = {
        action,
        start: () => {
          signal?.removeEventListener('abort', onAbort);
          this.inFlight = action;
          // Settled: the caller first, then the next call of the lane.
          let sent: Promise<T>;
          try {
            sent = send();
          } catch (err) {
            sent = Promise.reject(err);
          }
          sent.then(resolve, reject).finally(() => {
            this.inFlight = null;
            this.next();
          });
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(job);
      this.next();
    });
  }

  private next(): void {
    if (this.inFlight !== null) return;
    const job = this.waiting.shift();
    if (job) job.start();
    else for (const tell of this.idle.splice(0)) tell();
  }
}

function abortError(signal: AbortSignal): Error {
  const err = new Error(typeof signal.reason === 'string' ? signal.reason : 'aborted while waiting for its lane');
  err.name = 'AbortError';
  return err;
}

/**
 * The connection's client with its calls in lanes: made once per connection (central-system.ts
 * attach), the same object handed to every part, so identity comparisons (`clientOf(id) ===
 * client`) hold. Everything but call() is the connection's own.
 */
export function withCallLanes(client: ChargerClient): LanedChargerClient {
  const lanes: Record<CallLane, Lane> = { ordinary: new Lane(), safety: new Lane() };
  return {
    identity: client.identity,
    protocol: client.protocol,
    handle: (method, handler) => client.handle(method, handler),
    call: (method: string, params: unknown, opts: CallOptions = {}) => {
      const { lane = 'ordinary', ...rest } = opts;
      return lanes[lane].run(method, () => client.call(method, params, rest), rest.signal);
    },
    on: (event, listener) => client.on(event, listener),
    close: (opts) => client.close(opts),
    safetyCallPending: () => lanes.safety.pending(),
    safetyCallSettled: (waitMs) => lanes.safety.settled(waitMs),
  };
}
