// Pure: Authorize's answer for an id tag under a charge point's auth setting.
import type { ChargerConfig } from '../config/types.js';

export type IdTagStatus = 'Accepted' | 'Invalid';

/** accept_all: every tag; a local list: exactly its tags (OCPP id tags compare case-insensitively). */
export function authorizeIdTag(auth: ChargerConfig['auth'], idTag: string): IdTagStatus {
  if (auth === 'accept_all') return 'Accepted';
  const wanted = idTag.toLowerCase();
  return auth.id_tags.some((t) => t.toLowerCase() === wanted) ? 'Accepted' : 'Invalid';
}

/** The configured parent (group) of an id tag, looked up as the tag is (case-insensitively); null: none. */
export function parentIdTagOf(auth: ChargerConfig['auth'], idTag: string): string | null {
  if (auth === 'accept_all' || !auth.parent_id_tags) return null;
  const wanted = idTag.toLowerCase();
  for (const [tag, parent] of Object.entries(auth.parent_id_tags)) if (tag.toLowerCase() === wanted) return parent;
  return null;
}

/** OCPP 1.6 IdTagInfo for an id tag: its status and, when Accepted and it has a configured parent, parentIdTag. */
export function idTagInfo<S extends string = IdTagStatus>(auth: ChargerConfig['auth'], idTag: string, status: S = authorizeIdTag(auth, idTag) as S): { status: S; parentIdTag?: string } {
  const parent = status === 'Accepted' ? parentIdTagOf(auth, idTag) : null;
  return parent === null ? { status } : { status, parentIdTag: parent };
}
