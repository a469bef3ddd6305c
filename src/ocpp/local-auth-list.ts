// Pure: the SendLocalList request that brings a charger's local authorization list (OCPP 1.6
// section 3.5, 5.16) to the configured id tags (chargers[].auth.id_tags), so that it
// authorizes them while the gateway is out of reach. Full: the whole list; Differential:
// the tags added (Accepted) and removed (an entry without idTagInfo deletes it). Each update
// carries the next version; tags compare case-insensitively (id-tags.ts). An added tag with a
// configured parent carries it (idTagInfo.parentIdTag); a changed parent of a tag already held
// needs a Full list (id-tag-reload.ts fullList), as a Differential compares the tags only.
import type { HeldLocalList } from '../store/ocpp-local-lists.js';

export type LocalListUpdateType = 'Full' | 'Differential';

export interface AuthorizationData {
  readonly idTag: string;
  /** parentIdTag: the tag's group (auth.parent_id_tags), so the charger knows it offline too. */
  readonly idTagInfo?: { readonly status: 'Accepted'; readonly parentIdTag?: string };
}

export interface SendLocalListRequest {
  readonly listVersion: number;
  readonly updateType: LocalListUpdateType;
  readonly localAuthorizationList: readonly AuthorizationData[];
}

export interface LocalListUpdate {
  readonly request: SendLocalListRequest;
  /** The tags the charger holds once it accepted the request. */
  readonly idTags: readonly string[];
}

const key = (tag: string) => tag.toLowerCase();

/** The configured tags without repeats (first spelling kept), sorted. */
export function wantedIdTags(configured: readonly string[]): string[] {
  const seen = new Map<string, string>();
  for (const t of configured) if (!seen.has(key(t))) seen.set(key(t), t);
  // Code-unit order of the lowercased tags: localeCompare would load ICU's collation data (3 MB
  // resident on Node 24, docs/architecture.md, Memory), and the order only has to be stable.
  return [...seen.values()].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/**
 * The update to send: `Full` when asked or when the charger holds no list of ours, else the
 * difference; null when a differential update would change nothing (the charger is in step).
 */
export function localListUpdate(configured: readonly string[], held: HeldLocalList | undefined, asked: LocalListUpdateType | 'auto', parentOf: (idTag: string) => string | null = () => null): LocalListUpdate | null {
  const wanted = wantedIdTags(configured);
  const accepted = (idTag: string): AuthorizationData => {
    const parentIdTag = parentOf(idTag);
    return { idTag, idTagInfo: parentIdTag === null ? { status: 'Accepted' } : { status: 'Accepted', parentIdTag } };
  };
  const listVersion = (held?.listVersion ?? 0) + 1;
  if (asked === 'Full' || held === undefined) {
    return { request: { listVersion, updateType: 'Full', localAuthorizationList: wanted.map(accepted) }, idTags: wanted };
  }
  const had = new Set(held.idTags.map(key));
  const want = new Set(wanted.map(key));
  const added = wanted.filter((t) => !had.has(key(t))).map(accepted);
  const removed = held.idTags.filter((t) => !want.has(key(t))).map((idTag): AuthorizationData => ({ idTag }));
  if (added.length === 0 && removed.length === 0) return null;
  return { request: { listVersion, updateType: 'Differential', localAuthorizationList: [...added, ...removed] }, idTags: wanted };
}
