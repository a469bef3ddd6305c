// Pure: Authorize's answer for an id tag under a charge point's auth setting.
import type { ChargerConfig } from '../config/types.js';

export type IdTagStatus = 'Accepted' | 'Invalid';

/** accept_all: every tag; a local list: exactly its tags (OCPP id tags compare case-insensitively). */
export function authorizeIdTag(auth: ChargerConfig['auth'], idTag: string): IdTagStatus {
  if (auth === 'accept_all') return 'Accepted';
  const wanted = idTag.toLowerCase();
  return auth.id_tags.some((t) => t.toLowerCase() === wanted) ? 'Accepted' : 'Invalid';
}
