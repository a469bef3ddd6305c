// OCPP 2.0.1 authorization (Part 2, block C: C01 Authorize, and the idToken of a
// TransactionEvent, transactions.ts): an idToken against the charger's configured id tags,
// by the same rule as a 1.6 idTag (id-tags.ts: accept_all, or exactly the listed ones,
// case-insensitively). 2.0.1 gives the token a type; each type that carries an identifier
// (ISO14443/ISO15693 card UIDs, eMAID, KeyCode, Local, MacAddress, Central) is looked up by
// its idToken. NoAuthorization (a station that did not identify anyone) is accepted only
// under accept_all: with a list configured, the site wants to know who charges.
import type { ChargerConfig } from '../../config/types.js';
import { authorizeIdTag } from '../id-tags.js';
import { registeredOnly, type Connection201 } from './connection.js';

export interface IdToken201 {
  readonly idToken: string;
  readonly type: 'Central' | 'eMAID' | 'ISO14443' | 'ISO15693' | 'KeyCode' | 'Local' | 'MacAddress' | 'NoAuthorization';
}

/** The idTokenInfo.status for a token (2.0.1 AuthorizationStatusEnumType): Accepted or Invalid, as for 1.6. */
export function authorizeIdToken(auth: ChargerConfig['auth'], token: IdToken201): 'Accepted' | 'Invalid' {
  if (token.type === 'NoAuthorization') return auth === 'accept_all' ? 'Accepted' : 'Invalid';
  return authorizeIdTag(auth, token.idToken);
}

export function registerAuthorization(c: Connection201): void {
  const { log } = c.tools;
  registeredOnly(c)(
    'Authorize',
    (p: { idToken: IdToken201 }) => {
      const status = authorizeIdToken(c.auth(), p.idToken);
      log.info({ id_token_type: p.idToken.type, status }, 'Authorize answered');
      return { idTokenInfo: { status } };
    },
    { store: false },
  );
}
