// What a config file read again on SIGHUP changes of the chargers' authorization (ocpp/id-tag-reload.ts).
import { describe, expect, it } from 'vitest';
import type { ChargerConfig } from '../../src/config/types.js';
import { authChanges, removesIdTags } from '../../src/ocpp/id-tag-reload.js';

const charger = (id: string, auth: ChargerConfig['auth'], idTokenType: ChargerConfig['id_token_type'] = 'ISO14443') => ({ id, password: 'x'.repeat(16), auth, id_token_type: idTokenType }) as unknown as ChargerConfig;

describe('authChanges', () => {
  it('takes only the auth of chargers configured now, and names the ones added or removed', () => {
    const inForce = new Map([
      ['A', charger('A', { id_tags: ['T1', 'T2'] })],
      ['B', charger('B', 'accept_all')],
      ['C', charger('C', { id_tags: ['T1'] })],
    ]);
    const changes = authChanges(inForce, [charger('A', { id_tags: ['T1', 'T3'] }), charger('B', 'accept_all'), charger('D', 'accept_all')]);
    expect(changes).toEqual({ changed: [{ chargePointId: 'A', auth: { id_tags: ['T1', 'T3'] }, idTokenType: 'ISO14443', fullList: false }], added: ['D'], removed: ['C'] });
  });

  it('sees a switch between a list and accept_all, and nothing when the file says the same', () => {
    const inForce = new Map([['A', charger('A', { id_tags: ['T1'] })]]);
    expect(authChanges(inForce, [charger('A', 'accept_all')]).changed).toEqual([{ chargePointId: 'A', auth: 'accept_all', idTokenType: 'ISO14443', fullList: false }]);
    expect(authChanges(inForce, [charger('A', { id_tags: ['T1'] })])).toEqual({ changed: [], added: [], removed: [] });
  });

  it('a changed id token type or group, with the same tags, is a change a Differential cannot carry: a Full list', () => {
    const inForce = new Map([['A', charger('A', { id_tags: ['T1'] })]]);
    expect(authChanges(inForce, [charger('A', { id_tags: ['T1'] }, 'ISO15693')]).changed).toEqual([{ chargePointId: 'A', auth: { id_tags: ['T1'] }, idTokenType: 'ISO15693', fullList: true }]);
    const grouped = { id_tags: ['T1'], parent_id_tags: { T1: 'G' } };
    expect(authChanges(inForce, [charger('A', grouped)]).changed).toEqual([{ chargePointId: 'A', auth: grouped, idTokenType: 'ISO14443', fullList: true }]);
    // A tag added to a list with groups unchanged: the Differential suffices.
    const withGroup = new Map([['A', charger('A', grouped)]]);
    expect(authChanges(withGroup, [charger('A', { id_tags: ['T1', 'T2'], parent_id_tags: { T1: 'G' } })]).changed[0]!.fullList).toBe(false);
  });
});

describe('removesIdTags: a ClearCache after SIGHUP', () => {
  it('only when the new auth refuses a tag the old one accepted', () => {
    expect(removesIdTags({ id_tags: ['TAG-A', 'TAG-B'] }, { id_tags: ['tag-a', 'TAG-B', 'TAG-C'] })).toBe(false);
    expect(removesIdTags({ id_tags: ['TAG-A', 'TAG-B'] }, { id_tags: ['TAG-A', 'TAG-C'] })).toBe(true);
    expect(removesIdTags('accept_all', { id_tags: ['TAG-A'] })).toBe(true);
    expect(removesIdTags({ id_tags: ['TAG-A'] }, 'accept_all')).toBe(false);
  });
});
