import { describe, expect, it } from 'vitest';
import { localListUpdate, wantedIdTags } from '../../src/ocpp/local-auth-list.js';

describe('local authorization list updates from the configured id tags', () => {
  it('sends the whole list, without repeats (case-insensitive), when the charger holds none of ours', () => {
    expect(wantedIdTags(['b1', 'A2', 'B1'])).toEqual(['A2', 'b1']);
    expect(localListUpdate(['b1', 'A2', 'B1'], undefined, 'auto')).toEqual({
      request: { listVersion: 1, updateType: 'Full', localAuthorizationList: [{ idTag: 'A2', idTagInfo: { status: 'Accepted' } }, { idTag: 'b1', idTagInfo: { status: 'Accepted' } }] },
      idTags: ['A2', 'b1'],
    });
  });

  it('sends the difference as the next version: added Accepted, removed without idTagInfo; nothing when in step', () => {
    const held = { listVersion: 4, idTags: ['A2', 'b1'], updatedAtMs: 0 };
    expect(localListUpdate(['a2', 'B1'], held, 'auto')).toBeNull();
    expect(localListUpdate(['A2', 'C3'], held, 'auto')!.request).toEqual({ listVersion: 5, updateType: 'Differential', localAuthorizationList: [{ idTag: 'C3', idTagInfo: { status: 'Accepted' } }, { idTag: 'b1' }] });
    expect(localListUpdate(['A2', 'b1'], held, 'Full')!.request).toMatchObject({ listVersion: 5, updateType: 'Full' });
    // An empty configured list empties the charger's.
    expect(localListUpdate([], held, 'Differential')!.request.localAuthorizationList).toEqual([{ idTag: 'A2' }, { idTag: 'b1' }]);
  });

  it('gives an added tag with a parent its parentIdTag; removals carry none', () => {
    const parentOf = (t: string) => (t.toLowerCase() === 'c3' ? 'HOUSE' : null);
    const held = { listVersion: 4, idTags: ['A2', 'b1'], updatedAtMs: 0 };
    expect(localListUpdate(['A2', 'C3'], held, 'auto', parentOf)!.request.localAuthorizationList).toEqual([{ idTag: 'C3', idTagInfo: { status: 'Accepted', parentIdTag: 'HOUSE' } }, { idTag: 'b1' }]);
    expect(localListUpdate(['A2', 'C3'], undefined, 'auto', parentOf)!.request.localAuthorizationList).toEqual([{ idTag: 'A2', idTagInfo: { status: 'Accepted' } }, { idTag: 'C3', idTagInfo: { status: 'Accepted', parentIdTag: 'HOUSE' } }]);
  });
});
