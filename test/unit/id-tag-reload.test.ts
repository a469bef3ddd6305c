// What a config file read again on SIGHUP changes of the chargers' authorization (ocpp/id-tag-reload.ts).
import { describe, expect, it } from 'vitest';
import type { ChargerConfig } from '../../src/config/types.js';
import { authChanges, removesIdTags } from '../../src/ocpp/id-tag-reload.js';

const charger = (id: string, auth: ChargerConfig['auth']) => ({ id, password: 'x'.repeat(16), auth }) as unknown as ChargerConfig;

describe('authChanges', () => {
  it('takes only the auth of chargers configured now, and names the ones added or removed', () => {
    const inForce = new Map([
      ['A', charger('A', { id_tags: ['T1', 'T2'] })],
      ['B', charger('B', 'accept_all')],
      ['C', charger('C', { id_tags: ['T1'] })],
    ]);
    const changes = authChanges(inForce, [charger('A', { id_tags: ['T1', 'T3'] }), charger('B', 'accept_all'), charger('D', 'accept_all')]);
    expect(changes).toEqual({ changed: [{ chargePointId: 'A', auth: { id_tags: ['T1', 'T3'] } }], added: ['D'], removed: ['C'] });
  });

  it('sees a switch between a list and accept_all, and nothing when the file says the same', () => {
    const inForce = new Map([['A', charger('A', { id_tags: ['T1'] })]]);
    expect(authChanges(inForce, [charger('A', 'accept_all')]).changed).toEqual([{ chargePointId: 'A', auth: 'accept_all' }]);
    expect(authChanges(inForce, [charger('A', { id_tags: ['T1'] })])).toEqual({ changed: [], added: [], removed: [] });
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
