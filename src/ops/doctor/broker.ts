// doctor: the MQTT broker answers with the configured TLS and credentials and lets us publish.
import { readFileSync } from 'node:fs';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import type { Config, MqttConfig } from '../../config/types.js';
import { BUILD_DATE_MS } from '../../version.js';
import { resolveNodes, systemLookup, type BrokerNode } from '../../uplink/broker-nodes.js';
import { meterCheckName } from './meters.js';
import { errorCode, errorMessage, fail, pass, skip, warn, type CheckResult, type DoctorCheck, type DoctorEnv } from './types.js';

/** TLS error codes from Node's tls module, with what an installer can do about each. */
const TLS_FIXES: Readonly<Record<string, string>> = {
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'the broker\'s certificate is not signed by a CA this gateway knows: set mqtt.ca_file to the operator\'s CA certificate',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'the broker\'s CA is unknown here: set mqtt.ca_file to the operator\'s CA certificate',
  SELF_SIGNED_CERT_IN_CHAIN: 'the broker uses a private CA: set mqtt.ca_file to it',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'the broker uses a self-signed certificate: set mqtt.ca_file to it',
  CERT_HAS_EXPIRED: 'the broker\'s certificate has expired, or this gateway\'s clock is far ahead: check the clock line, else tell the operator',
  CERT_NOT_YET_VALID: 'this gateway\'s clock is behind (no RTC, no NTP yet?): check the clock line',
  ERR_TLS_CERT_ALTNAME_INVALID: 'the certificate does not name this host: use the host name the operator gave (mqtt.url), or set mqtt.servername',
};

/** CONNACK refusals (MQTT 5 reason codes and MQTT 3.1.1 return codes). */
const CONNACK_FIXES: Readonly<Record<number, string>> = {
  134: 'wrong user name or password: check mqtt.username and mqtt.password / password_file',
  // mosquitto answers a wrong password under MQTT 5 with 135, not 134.
  135: 'wrong user name or password, or the account may not connect: check mqtt.username and mqtt.password / password_file, else ask the operator',
  133: 'the broker refuses this client id: set mqtt.client_id to the one the operator issued',
  4: 'wrong user name or password: check mqtt.username and mqtt.password / password_file',
  5: 'wrong user name or password, or the account may not connect: check mqtt.username and mqtt.password / password_file, else ask the operator',
  2: 'the broker refuses this client id: set mqtt.client_id to the one the operator issued',
};

export function brokerOptions(mq: MqttConfig, config: Config, timeoutMs: number): IClientOptions {
  const read = (path: string | undefined) => (path ? readFileSync(path) : undefined);
  return {
    protocolVersion: mq.protocol_version,
    username: mq.username,
    password: mq.password,
    ca: read(mq.ca_file),
    cert: read(mq.cert_file),
    key: read(mq.key_file),
    servername: mq.servername,
    rejectUnauthorized: true,
    // Never the daemon's own client id: the broker would disconnect the running daemon.
    clientId: `${mq.client_id ?? config.gateway_id ?? 'metergate'}-doctor-${process.pid}`,
    clean: true,
    reconnectPeriod: 0,
    connectTimeout: timeoutMs,
    keepalive: 30,
  };
}

function connectOnce(node: BrokerNode, options: IClientOptions): Promise<MqttClient> {
  return new Promise((resolve, reject) => {
    // A node of a host name with several addresses: this address, the certificate checked against the name.
    const client = mqtt.connect(node.url.toString(), node.address ? { ...options, host: node.address, servername: options.servername ?? node.url.hostname } : options);
    const onError = (err: Error) => {
      client.end(true);
      reject(err);
    };
    client.once('connect', () => {
      client.off('error', onError);
      resolve(client);
    });
    client.once('error', onError);
    client.once('close', () => reject(Object.assign(new Error('connection closed before CONNACK'), { code: 'ECONNRESET' })));
  });
}

function publishOnce(client: MqttClient, topic: string, payload: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(Object.assign(new Error(`no PUBACK within ${timeoutMs} ms`), { code: 'ETIMEDOUT' })), timeoutMs);
    client.publish(topic, payload, { qos: 1, retain: false }, (err) => {
      clearTimeout(timer);
      if (err) reject(err);
      else resolve();
    });
  });
}

function explainConnectError(err: unknown, url: string, setting: string, check = 'broker'): CheckResult {
  const r = explainFor(err, url, setting);
  return { ...r, check };
}

/** Where the config names this node: `mqtt.url`, or `mqtt.urls[i]` of a cluster (the one to fix). */
function settingOf(mq: MqttConfig, node: BrokerNode): string {
  if (mq.urls.length <= 1) return 'mqtt.url';
  const i = mq.urls.findIndex((u) => {
    try {
      return new URL(u).toString() === node.url.toString();
    } catch {
      return false;
    }
  });
  return i < 0 ? 'mqtt.urls' : `mqtt.urls[${i}]`;
}

function explainFor(err: unknown, url: string, setting: string): CheckResult {
  const code = errorCode(err);
  const numeric = Number(code);
  if (code && TLS_FIXES[code]) return fail('broker', `${url}: TLS handshake failed (${code})`, TLS_FIXES[code].replace('(mqtt.url)', `(${setting})`));
  if (Number.isInteger(numeric) && CONNACK_FIXES[numeric]) return fail('broker', `${url}: ${errorMessage(err)} (reason code ${numeric})`, CONNACK_FIXES[numeric]);
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return fail('broker', `${url}: host name does not resolve (${code})`, `check the host name in ${setting} and the gateway's DNS (\`resolvectl status\`)`);
  if (code === 'ECONNREFUSED') return fail('broker', `${url}: connection refused`, `check the port in ${setting} (8883 for MQTT over TLS) and that the broker runs there`);
  if (/timeout/i.test(errorMessage(err)) || code === 'ETIMEDOUT') {
    return fail('broker', `${url}: no answer (${errorMessage(err)})`, `check that outbound TCP to the broker port (8883) is allowed by the site firewall, and ${setting}`);
  }
  return fail('broker', `${url}: ${errorMessage(err)}${code ? ` (${code})` : ''}`, `check ${setting}, credentials and the network`);
}

/**
 * Connects with the configured TLS settings and credentials (under a client id of its
 * own, so the running daemon keeps its session), then proves publish permission per
 * resource with a real heartbeat message: valid, truthful (the gateway is up and the
 * meter just answered), and harmless to subscribers. Only MQTT 5 tells a refused
 * publish (PUBACK reason code 135); MQTT 3.1.1 brokers drop it silently.
 */
export const brokerCheck: DoctorCheck = {
  name: 'broker',
  needsConfig: true,
  async run(env: DoctorEnv) {
    const config = env.config!;
    const mq = config.mqtt;
    if (!mq) return [warn('broker', 'no mqtt section: nothing is sent to the cloud', 'add mqtt.url, username and password to the config')];
    const options = brokerOptions(mq, config, env.timeoutMs);
    const urls = (mq.urls && mq.urls.length > 0 ? mq.urls : [mq.url]).map((u) => new URL(u));
    const nodes = await resolveNodes(urls, systemLookup);
    const loggedIn = (label: string) => `${label}: TLS verified, logged in as ${mq.username ?? '(no user)'} (MQTT ${mq.protocol_version === 5 ? '5.0' : '3.1.1'})`;
    let client: MqttClient | null = null;
    const results: CheckResult[] = [];
    if (nodes.length === 1) {
      try {
        client = await connectOnce(nodes[0]!, options);
      } catch (err) {
        return [explainConnectError(err, nodes[0]!.label, settingOf(mq, nodes[0]!))];
      }
      results.push(pass('broker', loggedIn(nodes[0]!.label)));
    } else {
      // Every node on its own line: a wrong certificate or a dead node is named for that node.
      const failed: string[] = [];
      for (const [i, node] of nodes.entries()) {
        const check = `broker node ${i + 1}`;
        try {
          const c = await connectOnce(node, options);
          results.push(pass(check, loggedIn(node.label)));
          if (client) await c.endAsync().catch(() => undefined);
          else client = c;
        } catch (err) {
          results.push(explainConnectError(err, node.label, settingOf(mq, node), check));
          failed.push(`node ${i + 1}`);
        }
      }
      const summary = `${nodes.length - failed.length} of ${nodes.length} broker nodes take the gateway`;
      if (!client) return [fail('broker', `${summary}: none`, 'see the broker node lines'), ...results];
      results.unshift(
        failed.length === 0
          ? pass('broker', summary)
          : warn('broker', `${summary}; ${failed.join(', ')} failed (the gateway uses the others meanwhile)`, 'see the broker node lines; until fixed the cluster has fewer nodes for this gateway to fail over to'),
      );
    }
    if (mq.protocol_version !== 5) {
      results.push(
        warn(
          'broker protocol',
          'MQTT 3.1.1: a broker drops a publish its ACL refuses and still acknowledges it, so the gateway deletes it as delivered and those readings are lost without a trace (only MQTT 5 reports a refusal, and metergate then keeps the message)',
          'set mqtt.protocol_version: 5 (mosquitto 1.6+, EMQX, HiveMQ, VerneMQ support it)',
        ),
      );
    }
    try {
      const now = env.now();
      for (const meter of config.meters) {
        const check = `publish ${meter.resource_id.slice(0, 8)}`;
        const topic = `${mq.topic_prefix}/resources/${meter.resource_id}/heartbeats`;
        const answered = env.results.find((r) => r.check === meterCheckName(meter))?.status === 'pass';
        if (mq.protocol_version !== 5) {
          results.push(warn(check, `${topic}: cannot be verified under MQTT 3.1.1 (refused messages are dropped silently)`, 'set mqtt.protocol_version: 5 if the broker supports it'));
          continue;
        }
        if (!answered) {
          results.push(skip(check, `${topic}: not tested (the meter did not answer; a heartbeat for it would be false)`));
          continue;
        }
        if (now < BUILD_DATE_MS) {
          results.push(skip(check, `${topic}: not tested (the clock is not plausible; see the clock line)`));
          continue;
        }
        const heartbeat = JSON.stringify({ message_type: 'heartbeat', resource_id: meter.resource_id, organization_id: config.organization_id, published_at: new Date(now).toISOString() });
        try {
          await publishOnce(client!, topic, heartbeat, env.timeoutMs);
          results.push(pass(check, `${topic}: broker accepted a heartbeat (PUBACK)`));
        } catch (err) {
          const rc = Number(errorCode(err));
          results.push(
            rc === 135
              ? fail(check, `${topic}: broker refused publishing (PUBACK reason code 135, not authorized)`, `ask the operator to allow ${mq.username ?? 'this user'} to publish to ${mq.topic_prefix}/resources/${meter.resource_id}/#, or correct meters[].resource_id`)
              : fail(check, `${topic}: ${errorMessage(err)}`, 'check the broker\'s ACL for this user and topic'),
          );
        }
      }
    } finally {
      await client!.endAsync().catch(() => undefined);
    }
    return results;
  },
};
