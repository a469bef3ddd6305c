// The broker's nodes, in the order the connection tries them: every URL of mqtt.urls, and a
// host name with several addresses once per address (a cluster behind one DNS name), so a
// node that is gone is left for the next one instead of being asked again and again. What
// each node did last (its error, when it failed) is kept per node for the surfaces.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { BrokerNodeView } from '../ops/observability/views.js';

/** One place to connect to: the configured URL, and the address to use when its name has several. */
export interface BrokerNode {
  /** URL without credentials (+ ` [address]`): what logs and the surfaces call it. */
  readonly label: string;
  readonly url: URL;
  /** Connect to this address, verifying the certificate against the URL's host name. */
  readonly address?: string;
}

/** Addresses of a host name (getaddrinfo: /etc/hosts, then DNS). */
export type AddressLookup = (hostname: string) => Promise<ReadonlyArray<{ address: string; family: number }>>;

export const systemLookup: AddressLookup = (hostname) => lookup(hostname, { all: true });

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

/**
 * The nodes of these URLs. A name with several IPv4 addresses (or, without those, several
 * IPv6 ones) is a node per address; a name with one address per family is one node (Node's
 * connect tries both families itself). A name that does not resolve stays one node: its
 * connect attempt fails and says so for that node.
 */
export async function resolveNodes(urls: readonly URL[], lookupFn: AddressLookup): Promise<BrokerNode[]> {
  const nodes: BrokerNode[] = [];
  for (const url of urls) {
    const label = redactUrl(url.toString());
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) !== 0) {
      nodes.push({ label, url });
      continue;
    }
    let found: ReadonlyArray<{ address: string; family: number }> = [];
    try {
      found = await lookupFn(host);
    } catch {
      // Reported by the connect attempt, for this node.
    }
    const v4 = [...new Set(found.filter((a) => a.family === 4).map((a) => a.address))];
    const v6 = [...new Set(found.filter((a) => a.family === 6).map((a) => a.address))];
    const several = v4.length > 1 ? v4 : v6.length > 1 && v4.length === 0 ? v6 : null;
    if (!several) nodes.push({ label, url });
    else for (const address of several) nodes.push({ label: `${label} [${address}]`, url, address });
  }
  return nodes;
}

interface NodeRecord {
  lastError: string | null;
  lastFailedAtMs: number | null;
  failures: number;
}

/**
 * What each node did last, by label: kept across re-resolutions of the names for the nodes
 * still there, forgotten for an address a name no longer resolves to (a cluster behind a
 * DNS name whose nodes come and go, a cloud broker's rotating addresses: a record per
 * address ever seen would grow for as long as the gateway runs).
 */
export class NodeHistory {
  private readonly records = new Map<string, NodeRecord>();

  /** The nodes are these now (after a resolution): the others' records go. */
  keepOnly(nodes: readonly BrokerNode[]): void {
    const current = new Set(nodes.map((n) => n.label));
    for (const label of this.records.keys()) if (!current.has(label)) this.records.delete(label);
  }

  /** How many nodes it keeps a record of (at most the nodes of the last resolution, and the one being tried). */
  get size(): number {
    return this.records.size;
  }

  private record(label: string): NodeRecord {
    let r = this.records.get(label);
    if (!r) this.records.set(label, (r = { lastError: null, lastFailedAtMs: null, failures: 0 }));
    return r;
  }

  failed(label: string, error: string, atMs: number): void {
    const r = this.record(label);
    r.lastError = error;
    r.lastFailedAtMs = atMs;
    r.failures += 1;
  }

  connected(label: string): void {
    this.record(label).lastError = null;
  }

  failures(label: string): number {
    return this.records.get(label)?.failures ?? 0;
  }

  views(nodes: readonly BrokerNode[], current: string | null): BrokerNodeView[] {
    return nodes.map((n) => {
      const r = this.records.get(n.label);
      const state = n.label === current ? 'current' : r?.lastError ? 'failed' : 'standby';
      return { node: n.label, state, lastError: r?.lastError ?? null, lastFailedAtMs: r?.lastFailedAtMs ?? null, failures: r?.failures ?? 0 };
    });
  }
}
