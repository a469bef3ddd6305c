// SendLocalList (OCPP 2.0.1 D01): the same list as 1.6's (local-list-sync.ts builds it from the
// configured id tags, local-auth-list.ts), in 2.0.1's shape: versionNumber for listVersion,
// each idTag an idToken of the charger's id_token_type (default ISO14443), idTokenInfo for
// idTagInfo, with the tag's parentIdTag (auth.parent_id_tags, local-auth-list.ts) as its
// groupIdToken (C09: the station then knows the group offline too). An entry without idTokenInfo removes the token (a Differential
// update's removals, D01.FR.17), as in 1.6. A Full list of no tags leaves the list out (2.0.1
// allows no empty array): the station's list is then emptied (TC_D_04). The answer (Accepted,
// Failed, VersionMismatch) is 1.6's, so a VersionMismatch gets the full list once, as for 1.6.
import type { AuthorizationData, SendLocalListRequest } from '../../local-auth-list.js';
import { groupIdToken, stationIdToken } from '../authorization.js';
import type { FormContext } from '../operation-forms.js';
import { registerOperationForm201 } from '../operation-forms.js';

/** Pure: the 2.0.1 SendLocalListRequest of a 1.6 one. */
export function sendLocalList201(request16: SendLocalListRequest, charger?: FormContext['charger']): Record<string, unknown> {
  const list = request16.localAuthorizationList.map((d: AuthorizationData) => ({
    idToken: stationIdToken(d.idTag, charger),
    ...(d.idTagInfo ? { idTokenInfo: { status: d.idTagInfo.status, ...(d.idTagInfo.parentIdTag === undefined ? {} : { groupIdToken: groupIdToken(d.idTagInfo.parentIdTag) }) } } : {}),
  }));
  return { versionNumber: request16.listVersion, updateType: request16.updateType, ...(list.length > 0 ? { localAuthorizationList: list } : {}) };
}

registerOperationForm201('SendLocalList', {
  toCall: (request, ctx) => ({ action: 'SendLocalList', request: sendLocalList201(request as unknown as SendLocalListRequest, ctx.charger) }),
  toAnswer: (answer) => answer,
});
