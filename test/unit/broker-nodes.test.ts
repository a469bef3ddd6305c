// The broker's nodes and the connect backoff (pure parts of uplink/broker-nodes.ts and
// uplink/backoff.ts), and mqtt.url / mqtt.urls in the config.
import { describe, expect, it } from 'vitest';
import { ConfigError, validateConfig } from '../../src/config/load.js';
import { freePort } from '../../src/free-port.js';
import { createLogger } from '../../src/log.js';
import { connectDelayMs } from '../../src/uplink/backoff.js';
import { NodeHistory, resolveNodes, type AddressLookup } from '../../src/uplink/broker-nodes.js';
import { MqttConnection } from '../../src/uplink/connection.js';

const ORG = '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11';

/** What getaddrinfo would answer for these names (the OS resolver is the edge here). */
const hosts = (table: Record<string, Array<[string, 4 | 6]>>): AddressLookup => async (name) => {
  const found = table[name];
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
  return found.map(([address, family]) => ({ address, family }));
};

describe('broker nodes', () => {
  it('counts a name with several IPv4 addresses once per address, and keeps one-per-family and IP URLs whole', async () => {
    const lookup = hosts({
      'cluster.example': [['10.0.0.1', 4], ['10.0.0.2', 4], ['10.0.0.3', 4], ['fd00::1', 6]],
      'one.example': [['10.0.1.1', 4], ['fd00::2', 6]],
      'v6.example': [['fd00::a', 6], ['fd00::b', 6]],
    });
    const nodes = await resolveNodes(
      ['mqtts://u:secret@cluster.example:8883', 'mqtts://one.example:8883', 'mqtts://10.9.9.9:8883', 'mqtts://v6.example', 'mqtts://gone.example:8883'].map((u) => new URL(u)),
      lookup,
    );
    expect(nodes.map((n) => [n.label, n.address ?? null])).toEqual([
      ['mqtts://cluster.example:8883 [10.0.0.1]', '10.0.0.1'],
      ['mqtts://cluster.example:8883 [10.0.0.2]', '10.0.0.2'],
      ['mqtts://cluster.example:8883 [10.0.0.3]', '10.0.0.3'],
      ['mqtts://one.example:8883', null],
      ['mqtts://10.9.9.9:8883', null],
      ['mqtts://v6.example [fd00::a]', 'fd00::a'],
      ['mqtts://v6.example [fd00::b]', 'fd00::b'],
      ['mqtts://gone.example:8883', null],
    ]);
  });

  it('keeps what each node did last, by node', () => {
    const h = new NodeHistory();
    const nodes = ['mqtts://a:8883', 'mqtts://b:8883', 'mqtts://c:8883'].map((u) => ({ label: u, url: new URL(u) }));
    h.failed('mqtts://a:8883', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE: unable to verify the first certificate', 1000);
    h.failed('mqtts://b:8883', 'connection lost: connection closed', 2000);
    h.connected('mqtts://b:8883');
    expect(h.views(nodes, 'mqtts://b:8883')).toEqual([
      { node: 'mqtts://a:8883', state: 'failed', lastError: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE: unable to verify the first certificate', lastFailedAtMs: 1000, failures: 1 },
      { node: 'mqtts://b:8883', state: 'current', lastError: null, lastFailedAtMs: 2000, failures: 1 },
      { node: 'mqtts://c:8883', state: 'standby', lastError: null, lastFailedAtMs: null, failures: 0 },
    ]);
  });
});

describe('broker nodes of a name whose addresses keep changing', () => {
  it('keeps a record of the nodes the name resolves to now, not of every address it ever did', { timeout: 60_000 }, async () => {
    // Real connection attempts to loopback addresses where nothing listens (refused at once);
    // the resolver (the edge: getaddrinfo) gives the name two new addresses every round, and
    // the first round's first address again in round 12.
    const port = await freePort();
    let round = 0;
    const lookup: AddressLookup = async () => {
      round += 1;
      const first = round === 12 ? '127.0.1.1' : `127.0.${round}.1`;
      return [{ address: first, family: 4 }, { address: `127.0.${round}.2`, family: 4 }];
    };
    const mqtt = validateConfig({ organization_id: ORG, mqtt: { url: `mqtts://cluster.example:${port}`, reconnect_min_ms: 100, reconnect_max_ms: 100 } }, 'test', {}).mqtt!;
    const conn = new MqttConnection({ mqtt, clientId: 'gw-test', logger: createLogger('silent'), random: () => 0, lookup });
    const history = (conn as unknown as { history: NodeHistory }).history;
    const sizes: number[] = [];
    const seen: { atRound12: typeof conn.brokerNodes | null } = { atRound12: null };
    conn.on('attempt', () => {
      sizes.push(history.size);
      // The first attempt of round 12 (to 127.0.1.1), before it fails.
      if (round === 12 && seen.atRound12 === null) seen.atRound12 = conn.brokerNodes;
    });
    conn.start();
    try {
      const end = Date.now() + 45_000;
      while (seen.atRound12 === null || sizes.length < 24) {
        if (Date.now() > end) throw new Error(`only ${round} rounds`);
        await new Promise((r) => setTimeout(r, 20));
      }
    } finally {
      await conn.stop();
    }
    // At each attempt: the nodes of the last resolution at most (two), never every address seen (24 by round 12).
    expect(sizes.length).toBeGreaterThanOrEqual(24);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(2);
    expect(history.size).toBeLessThanOrEqual(2);
    // 127.0.1.1 is back after ten rounds away: only the current nodes are shown, and it starts afresh.
    expect(seen.atRound12!.map((n) => [n.node, n.failures])).toEqual([
      [`mqtts://cluster.example:${port} [127.0.1.1]`, 0],
      [`mqtts://cluster.example:${port} [127.0.12.2]`, 0],
    ]);
  });
});

describe('connect backoff (equal jitter)', () => {
  const p = { minMs: 1000, maxMs: 60_000 };
  it('spreads each round over [c/2, c], doubling up to the maximum', () => {
    expect([connectDelayMs(p, 0, 0), connectDelayMs(p, 0, 0.999)]).toEqual([1000, 1999]);
    expect([connectDelayMs(p, 3, 0), connectDelayMs(p, 3, 0.999)]).toEqual([8000, 15_992]);
    expect([connectDelayMs(p, 40, 0), connectDelayMs(p, 40, 0.999)]).toEqual([30_000, 59_970]);
  });

  it('never lets one client id CONNECT more than 15 times a minute, however the dice fall (EMQX flapping detection)', () => {
    for (const random of [0, 0.5, 0.999]) {
      const at: number[] = [0];
      for (let n = 0; at.length < 40; n++) at.push(at[at.length - 1]! + connectDelayMs(p, n, random));
      const worst = Math.max(...at.map((t) => at.filter((u) => u >= t && u < t + 60_000).length));
      expect(worst).toBeLessThanOrEqual(7);
    }
  });
});

describe('mqtt.url and mqtt.urls', () => {
  const problems = (mqtt: unknown): readonly string[] => {
    try {
      validateConfig({ organization_id: ORG, mqtt }, 'test', {});
      return [];
    } catch (err) {
      return (err as ConfigError).problems;
    }
  };
  it('makes url a list of one and urls[0] the url', () => {
    const one = validateConfig({ organization_id: ORG, mqtt: { url: 'mqtts://a:8883' } }, 'test', {});
    expect(one.mqtt!.urls).toEqual(['mqtts://a:8883']);
    const many = validateConfig({ organization_id: ORG, mqtt: { urls: ['mqtts://a:8883', 'mqtts://b:8883'] } }, 'test', {});
    expect([many.mqtt!.url, many.mqtt!.urls]).toEqual(['mqtts://a:8883', ['mqtts://a:8883', 'mqtts://b:8883']]);
  });
  it('wants one of them, TLS on every node', () => {
    expect(problems({})).toEqual(['mqtt.url: is required']);
    expect(problems({ url: 'mqtts://a:8883', urls: ['mqtts://b:8883'] })).toEqual(['mqtt.urls: set either mqtt.url or mqtt.urls, not both (put every node in mqtt.urls)']);
    expect(problems({ urls: ['mqtts://a:8883', 'mqtt://b:1883'] })).toEqual([expect.stringMatching(/^mqtt\.urls.*1.*must start with mqtts:\/\//)]);
    expect(problems({ urls: [] })).toEqual([expect.stringMatching(/^mqtt\.urls/)]);
  });
});
