// The one MQTT connection of the gateway: owns TLS, credentials, protocol version and the
// connection state. mqtt.js `connect()` with reconnectPeriod 0 and our own backoff with
// jitter (design.md facts: the built-in reconnect is a fixed interval; connectAsync()
// rejects when the broker is down at start-up). Every attempt gets a fresh client, so
// mqtt.js's in-memory store never resends behind our back: after a loss, unacknowledged
// rows are sent again from SQLite (the source of truth).
//
// Several broker nodes (mqtt.urls, a name with several addresses; uplink/broker-nodes.ts):
// the connection stays on a node while it works; a lost or refused connection moves it to
// the next node after the jittered backoff (mqtt.js's own `servers` rotation has no backoff).
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import mqtt, { type IClientOptions, type IClientPublishOptions, type MqttClient } from 'mqtt';
import type { MqttConfig } from '../config/types.js';
import type { Logger } from '../log.js';
import type { BrokerNodeView, BrokerState } from '../ops/observability/views.js';
import { connectDelayMs, STABLE_CONNECTION_MS } from './backoff.js';
import { NodeHistory, redactUrl, resolveNodes, systemLookup, type AddressLookup, type BrokerNode } from './broker-nodes.js';

export { redactUrl };

export class InsecureBrokerUrlError extends Error {
  constructor(url: string) {
    super(`mqtt.url ${redactUrl(url)}: only mqtts:// is accepted (TLS is mandatory; plain mqtt:// is refused)`);
    this.name = 'InsecureBrokerUrlError';
  }
}

/** Refuses anything but mqtts:// (the config schema already does; this guards other callers). */
export function assertTlsUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InsecureBrokerUrlError(url);
  }
  if (parsed.protocol !== 'mqtts:') throw new InsecureBrokerUrlError(url);
  return parsed;
}

export interface MqttConnectionDeps {
  readonly mqtt: MqttConfig;
  readonly clientId: string;
  readonly logger: Logger;
  readonly random?: () => number;
  /** Addresses of a broker host name; default getaddrinfo. */
  readonly lookup?: AddressLookup;
}

export interface PublishRequest {
  readonly topic: string;
  readonly payload: string;
  readonly qos: 0 | 1;
  readonly retain: boolean;
  /** Sent as MQTT 5 user property `message_id` (the payload schemas forbid extra fields). */
  readonly messageId?: string;
}

/** A PUBACK with a failure reason code (MQTT 5, >= 0x80), e.g. 135 when the ACL refuses the topic (uplink/refusals.ts says what follows). */
export class PublishRefusedError extends Error {
  constructor(
    readonly reasonCode: number,
    message: string,
  ) {
    super(message);
    this.name = 'PublishRefusedError';
  }
}

export interface MqttConnectionEvents {
  connected: [];
  disconnected: [reason: string];
  /** Every attempt to open a connection, to this node (tests and benchmarks count them). */
  attempt: [node: string];
}

export class MqttConnection extends EventEmitter<MqttConnectionEvents> {
  private client: MqttClient | null = null;
  private current: BrokerState = 'disconnected';
  private attempt = 0;
  private timer: NodeJS.Timeout | null = null;
  private stopped = true;
  private error: string | null = null;
  private options: IClientOptions | null = null;
  private readonly urls: readonly URL[];
  /** The nodes in the order tried; resolved again each time the rotation starts over. */
  private nodes: BrokerNode[];
  private index = 0;
  private readonly history = new NodeHistory();
  private connectedAtMs: number | null = null;

  constructor(private readonly deps: MqttConnectionDeps) {
    super();
    const urls = deps.mqtt.urls && deps.mqtt.urls.length > 0 ? deps.mqtt.urls : [deps.mqtt.url];
    this.urls = urls.map(assertTlsUrl);
    this.nodes = this.urls.map((url) => ({ label: redactUrl(url.toString()), url }));
  }

  get state(): BrokerState {
    return this.current;
  }

  get lastError(): string | null {
    return this.error;
  }

  /** The node connected or being tried (URL without credentials). */
  get broker(): string {
    return this.node.label;
  }

  /** Every node, with what it did last. */
  get brokerNodes(): BrokerNodeView[] {
    return this.history.views(this.nodes, this.stopped ? null : this.node.label);
  }

  get protocolVersion(): 4 | 5 {
    return this.deps.mqtt.protocol_version;
  }

  private get node(): BrokerNode {
    return this.nodes[this.index % this.nodes.length]!;
  }

  /** Starts connecting (and keeps reconnecting with backoff) until stop(). Never waits for the broker. */
  start(): void {
    const m = this.deps.mqtt;
    const read = (path: string | undefined) => (path ? readFileSync(path) : undefined);
    this.options = {
      protocolVersion: m.protocol_version,
      clientId: this.deps.clientId,
      username: m.username,
      password: m.password,
      ca: read(m.ca_file),
      cert: read(m.cert_file),
      key: read(m.key_file),
      servername: m.servername,
      rejectUnauthorized: true,
      keepalive: m.keepalive_s,
      clean: true,
      reconnectPeriod: 0,
      connectTimeout: 30_000,
      // Our window bounds what is in flight; let mqtt.js not queue while offline.
      queueQoSZero: false,
      // mqtt-packet otherwise builds a cache of 65,536 two-byte Buffers on the first write:
      // 6 MB of heap (96 B per Buffer object) to save one tiny allocation per packet.
      writeCache: false,
      // Not a timer reset per packet (clearTimeout + setTimeout for every PUBLISH): the
      // keepalive PINGREQ goes out every keepalive_s whatever else was sent.
      reschedulePings: false,
      // mqtt.js calls its debug logger ~10 times per message even when it prints nothing;
      // DEBUG=mqttjs* still turns it on.
      ...(process.env.DEBUG ? {} : { log: noop }),
    };
    this.stopped = false;
    this.index = 0;
    void this.resolveThenConnect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const client = this.client;
    this.client = null;
    this.setState('disconnected', 'stopped');
    if (client) await new Promise<void>((resolve) => client.end(false, {}, () => resolve()));
  }

  /** At the start of each round through the nodes: a name's addresses may have changed. */
  private async resolveThenConnect(): Promise<void> {
    const lookupFn = this.deps.lookup ?? systemLookup;
    const names = this.urls.some((u) => isIP(u.hostname.replace(/^\[|\]$/g, '')) === 0);
    if (names) {
      try {
        const nodes = await resolveNodes(this.urls, lookupFn);
        if (nodes.length > 0) {
          this.nodes = nodes;
          this.history.keepOnly(nodes);
        }
      } catch (err) {
        this.deps.logger.warn({ err: (err as Error).message }, 'could not look up the broker nodes\' addresses; trying the names');
      }
    }
    this.connect();
  }

  private connect(): void {
    if (this.stopped || !this.options) return;
    this.setState('connecting', 'connecting');
    const node = this.node;
    this.emit('attempt', node.label);
    const options: IClientOptions = node.address
      ? { ...this.options, host: node.address, servername: this.options.servername ?? node.url.hostname }
      : this.options;
    let client: MqttClient;
    try {
      client = mqtt.connect(node.url.toString(), options);
    } catch (err) {
      // mqtt.js refuses some options synchronously; called from a timer or an un-awaited round,
      // a throw here would stop the process or leave the uplink 'connecting' for good.
      const reason = `could not start a connection: ${(err as Error).message}`;
      this.history.failed(node.label, reason, Date.now());
      this.setState('disconnected', reason);
      this.scheduleReconnect();
      return;
    }
    this.client = client;
    // This attempt's own error: a close without one must not inherit another node's.
    let attemptError: string | null = null;
    client.on('connect', () => {
      if (client !== this.client) return;
      // Small QoS 1 frames and their PUBACKs: Nagle + delayed ACK would stall the window.
      (client.stream as { setNoDelay?: (on: boolean) => void }).setNoDelay?.(true);
      const fields = { broker: node.label, ...(this.nodes.length > 1 ? { node: `${(this.index % this.nodes.length) + 1} of ${this.nodes.length}` } : {}) };
      if (this.attempt > 0) this.deps.logger.info({ ...fields, attempts: this.attempt }, 'connected to the MQTT broker again');
      else this.deps.logger.info({ ...fields, protocol: this.protocolVersion === 5 ? 'MQTT 5.0' : 'MQTT 3.1.1' }, 'connected to the MQTT broker');
      this.connectedAtMs = performance.now();
      this.error = null;
      this.history.connected(node.label);
      this.setState('connected', 'connected');
    });
    client.on('error', (err: Error & { code?: number | string }) => {
      if (client !== this.client) return;
      const message = describeError(err);
      if (message !== this.error) this.deps.logger.warn({ broker: node.label, err: message }, 'MQTT connection problem');
      this.error = attemptError = message;
    });
    client.on('close', () => {
      if (client !== this.client) return;
      this.client = null;
      client.end(true);
      const wasUp = this.connectedAtMs !== null;
      // A connection that held is a fresh start; one the broker drops right after CONNACK
      // (a refusal close, a session taken over) keeps growing the backoff, so a gateway
      // cannot make a CONNECT loop that a broker's flapping detection bans (docs/uplink.md).
      if (wasUp && performance.now() - this.connectedAtMs! >= STABLE_CONNECTION_MS) this.attempt = 0;
      this.connectedAtMs = null;
      const reason = attemptError ?? 'connection closed';
      this.history.failed(node.label, wasUp ? `connection lost: ${reason}` : reason, Date.now());
      this.setState('disconnected', reason);
      this.scheduleReconnect();
    });
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.timer) return;
    const delay = connectDelayMs({ minMs: this.deps.mqtt.reconnect_min_ms, maxMs: this.deps.mqtt.reconnect_max_ms }, this.attempt, (this.deps.random ?? Math.random)());
    this.attempt += 1;
    // Lost or refused: the next node gets the next attempt (one node: the same again).
    this.index = (this.index + 1) % this.nodes.length;
    const restart = this.index === 0 && this.nodes.length > 1;
    this.deps.logger.debug({ broker: this.node.label, delayMs: delay, attempt: this.attempt }, 'reconnecting to the MQTT broker after a pause');
    this.timer = setTimeout(() => {
      this.timer = null;
      if (restart) void this.resolveThenConnect();
      else this.connect();
    }, delay);
  }

  private setState(state: BrokerState, reason: string): void {
    const was = this.current;
    this.current = state;
    if (was === 'connected' && state !== 'connected') {
      if (!this.stopped) this.deps.logger.warn({ broker: this.node.label, reason }, 'lost the MQTT broker');
      this.emit('disconnected', reason);
    }
    if (state === 'connected' && was !== 'connected') this.emit('connected');
  }

  /**
   * Runs `fn` with the socket corked, so the publishes it makes leave in one write (one
   * TLS record and syscall for a whole window instead of one per message).
   */
  batch(fn: () => void): void {
    const stream = this.client?.stream as { cork?: () => void; uncork?: () => void } | undefined;
    stream?.cork?.();
    try {
      fn();
    } finally {
      if (stream?.uncork) process.nextTick(() => stream.uncork!());
    }
  }

  /**
   * Publishes on the live connection; `done` runs on PUBACK (QoS 1), on the write (QoS 0),
   * or with an error (connection lost: retry later; PublishRefusedError: the broker said no).
   * Returns false, without calling `done`, when not connected.
   */
  publish(req: PublishRequest, done: (err: Error | null) => void): boolean {
    const client = this.client;
    if (!client || this.current !== 'connected') return false;
    const opts: IClientPublishOptions = { qos: req.qos, retain: req.retain };
    if (this.protocolVersion === 5 && req.messageId) opts.properties = { userProperties: { message_id: req.messageId } };
    client.publish(req.topic, req.payload, opts, (err) => {
      if (!err) return done(null);
      const code = (err as Error & { code?: unknown }).code;
      // mqtt.js reports every PUBACK code but 0 and 16 as an error; below 0x80 is a success.
      if (typeof code === 'number' && code < 0x80) return done(null);
      done(typeof code === 'number' ? new PublishRefusedError(code, err.message) : err);
    });
    return true;
  }
}

function noop(): void {}

function describeError(err: Error & { code?: number | string }): string {
  const code = err.code;
  if (code === 4 || code === 134) return 'the broker refused the user name or password';
  if (code === 5 || code === 135) return 'the broker refused the connection: not authorized';
  return typeof code === 'string' ? `${code}: ${err.message}` : err.message;
}
