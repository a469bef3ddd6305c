// The one MQTT connection of the gateway: owns TLS, credentials, protocol version and the
// connection state. mqtt.js `connect()` with reconnectPeriod 0 and our own backoff with
// jitter (design.md facts: the built-in reconnect is a fixed interval; connectAsync()
// rejects when the broker is down at start-up). Every attempt gets a fresh client, so
// mqtt.js's in-memory store never resends behind our back: after a loss, unacknowledged
// rows are sent again from SQLite (the source of truth).
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import mqtt, { type IClientOptions, type IClientPublishOptions, type MqttClient } from 'mqtt';
import type { MqttConfig } from '../config/types.js';
import type { Logger } from '../log.js';
import type { BrokerState } from '../ops/observability/views.js';
import { reconnectDelayMs } from './backoff.js';

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

/** The URL without user info, for logs and the status page. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString().replace(/\/$/, '');
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//');
  }
}

export interface MqttConnectionDeps {
  readonly mqtt: MqttConfig;
  readonly clientId: string;
  readonly logger: Logger;
  readonly random?: () => number;
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
}

export class MqttConnection extends EventEmitter<MqttConnectionEvents> {
  private client: MqttClient | null = null;
  private current: BrokerState = 'disconnected';
  private attempt = 0;
  private timer: NodeJS.Timeout | null = null;
  private stopped = true;
  private error: string | null = null;
  private options: IClientOptions | null = null;
  private readonly url: URL;

  constructor(private readonly deps: MqttConnectionDeps) {
    super();
    this.url = assertTlsUrl(deps.mqtt.url);
  }

  get state(): BrokerState {
    return this.current;
  }

  get lastError(): string | null {
    return this.error;
  }

  get broker(): string {
    return redactUrl(this.deps.mqtt.url);
  }

  get protocolVersion(): 4 | 5 {
    return this.deps.mqtt.protocol_version;
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
    this.connect();
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

  private connect(): void {
    if (this.stopped || !this.options) return;
    this.setState('connecting', 'connecting');
    const client = mqtt.connect(this.url.toString(), this.options);
    this.client = client;
    client.on('connect', () => {
      if (client !== this.client) return;
      // Small QoS 1 frames and their PUBACKs: Nagle + delayed ACK would stall the window.
      (client.stream as { setNoDelay?: (on: boolean) => void }).setNoDelay?.(true);
      if (this.attempt > 0) this.deps.logger.info({ broker: this.broker, attempts: this.attempt }, 'connected to the MQTT broker again');
      else this.deps.logger.info({ broker: this.broker, protocol: this.protocolVersion === 5 ? 'MQTT 5.0' : 'MQTT 3.1.1' }, 'connected to the MQTT broker');
      this.attempt = 0;
      this.error = null;
      this.setState('connected', 'connected');
    });
    client.on('error', (err: Error & { code?: number | string }) => {
      if (client !== this.client) return;
      const message = describeError(err);
      if (message !== this.error) this.deps.logger.warn({ broker: this.broker, err: message }, 'MQTT connection problem');
      this.error = message;
    });
    client.on('close', () => {
      if (client !== this.client) return;
      this.client = null;
      client.end(true);
      this.setState('disconnected', this.error ?? 'connection closed');
      this.scheduleReconnect();
    });
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.timer) return;
    const delay = reconnectDelayMs({ minMs: this.deps.mqtt.reconnect_min_ms, maxMs: this.deps.mqtt.reconnect_max_ms }, this.attempt, (this.deps.random ?? Math.random)());
    this.attempt += 1;
    this.deps.logger.debug({ broker: this.broker, delayMs: delay, attempt: this.attempt }, 'reconnecting to the MQTT broker after a pause');
    this.timer = setTimeout(() => {
      this.timer = null;
      this.connect();
    }, delay);
  }

  private setState(state: BrokerState, reason: string): void {
    const was = this.current;
    this.current = state;
    if (was === 'connected' && state !== 'connected') {
      if (!this.stopped) this.deps.logger.warn({ broker: this.broker, reason }, 'lost the MQTT broker');
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
