import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/db.js';
import { TokenStore } from '../../src/store/tokens.js';

describe('TokenStore', () => {
  it('creates, verifies, lists without secrets, and revokes', () => {
    const db = openDatabase(':memory:');
    const store = new TokenStore(db);
    const { token, info } = store.create({ name: 'charger platform', type: 'cdrs', nowMs: 1_000 });
    expect(token).toMatch(/^mg_[a-z0-9]{10}_[A-Za-z0-9_-]{43}$/);
    expect(store.verify(token)).toEqual(info);
    expect(store.verify(token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A'))).toBeUndefined();
    expect(store.verify('garbage')).toBeUndefined();
    const raw = JSON.stringify(db.prepare('SELECT * FROM api_tokens').all());
    // The secret is the 43 characters after the id; it may itself contain '_'.
    expect(raw).not.toContain(token.slice(-43));
    expect(store.list()).toEqual([info]);
    expect(store.revoke('charger platform', 2_000)).toBe(1);
    expect(store.verify(token)).toBeUndefined();
    expect(store.list()[0].revokedAtMs).toBe(2_000);
    db.close();
  });
});
