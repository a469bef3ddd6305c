// An MQTT subscriber for tests: connects over TLS with its own credentials, collects every
// message with its topic, retain flag and MQTT 5 user properties.
import mqtt, { type MqttClient } from 'mqtt';
import { readFileSync } from 'node:fs';

export interface Received {
  readonly topic: string;
  readonly json: Record<string, unknown>;
  readonly retain: boolean;
  readonly messageId: string | null;
}

export interface TestSubscriber {
  readonly client: MqttClient;
  readonly messages: Received[];
  waitFor(predicate: (all: readonly Received[]) => boolean, what: string, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function subscribe(opts: {
  url: string;
  caFile: string;
  username: string;
  password: string;
  topic: string;
  protocolVersion?: 4 | 5;
  /** A persistent session (clean false, long expiry): messages published while it is away wait for it. */
  clientId?: string;
}): Promise<TestSubscriber> {
  const persistent = opts.clientId !== undefined;
  const client = mqtt.connect(opts.url, {
    ca: readFileSync(opts.caFile),
    username: opts.username,
    password: opts.password,
    protocolVersion: opts.protocolVersion ?? 5,
    clientId: opts.clientId,
    clean: !persistent,
    ...(persistent && (opts.protocolVersion ?? 5) === 5 ? { properties: { sessionExpiryInterval: 3600 } } : {}),
    reconnectPeriod: 200,
  });
  const messages: Received[] = [];
  client.on('message', (topic, payload, packet) => {
    const props = packet.properties?.userProperties as Record<string, string | string[]> | undefined;
    const id = props?.message_id;
    messages.push({ topic, json: JSON.parse(payload.toString()) as Record<string, unknown>, retain: packet.retain, messageId: Array.isArray(id) ? id[0] : (id ?? null) });
  });
  client.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    client.once('connect', () => resolve());
    client.once('error', reject);
  });
  await client.subscribeAsync(opts.topic, { qos: 1 });
  return {
    client,
    messages,
    async waitFor(predicate, what, timeoutMs = 30_000) {
      const until = Date.now() + timeoutMs;
      while (!predicate(messages)) {
        if (Date.now() > until) throw new Error(`timed out waiting for ${what} (${messages.length} message(s) received)`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async close() {
      await client.endAsync(true);
    },
  };
}
