import { describe, expect, it } from 'vitest';
import { DATABASE_KINDS, freshStoreEachTest } from '../helpers/stores.js';
import type { Store } from '../../src/storage/contract.js';
import type { AuthFailurePolicy } from '../../src/model/auth-failures.js';

const T0 = new Date('2026-11-22T03:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
const POLICY: AuthFailurePolicy = { maxFailures: 3, windowMs: 60_000, lockMs: 120_000 };

describe.each(DATABASE_KINDS)('operators repository (%s)', (kind) => {
  let store: Store;
  freshStoreEachTest(kind, (_db, s) => {
    store = s;
  });

  it('inserts an operator once; a taken username is refused without an error', async () => {
    const op = { username: 'ani', role: 'finance' as const, accounts: ['default', 'shop-2'], passwordHash: 'h1' };
    expect(await store.operators.insert(op, T0)).toBe(true);
    expect(await store.operators.insert({ ...op, role: 'admin', passwordHash: 'h2' }, at(1))).toBe(false);
    expect(await store.operators.get('ani')).toEqual({
      username: 'ani',
      role: 'finance',
      accounts: ['default', 'shop-2'],
      passwordHash: 'h1',
      disabledAt: null,
      createdAt: T0.toISOString(),
      lastSignInAt: null,
    });
    expect(await store.operators.get('nobody')).toBeUndefined();
  });

  it('lists by username, changes only the fields given, and records sign-ins', async () => {
    await store.operators.insert({ username: 'zed', role: 'viewer', accounts: null, passwordHash: 'z' }, T0);
    await store.operators.insert({ username: 'bea', role: 'admin', accounts: null, passwordHash: 'b' }, T0);
    expect((await store.operators.list()).map((o) => o.username)).toEqual(['bea', 'zed']);
    const changed = await store.operators.update('zed', { role: 'finance', accounts: ['default'] });
    expect(changed).toMatchObject({ role: 'finance', accounts: ['default'], passwordHash: 'z', disabledAt: null });
    expect(await store.operators.update('zed', { accounts: null, disabledAt: at(5).toISOString() })).toMatchObject({
      role: 'finance',
      accounts: null,
      disabledAt: at(5).toISOString(),
    });
    expect(await store.operators.update('zed', { disabledAt: null })).toMatchObject({ disabledAt: null });
    expect(await store.operators.update('ghost', { role: 'admin' })).toBeUndefined();
    await store.operators.recordSignIn('bea', at(9));
    expect((await store.operators.get('bea'))?.lastSignInAt).toBe(at(9).toISOString());
  });

  it('keeps sessions by id hash: seen, ended one at a time or all of a person, pruned when old', async () => {
    await store.operators.createSession('s1', 'ani', T0);
    await store.operators.createSession('s2', 'ani', T0);
    await store.operators.createSession('s3', 'bea', T0);
    await store.operators.touchSession('s1', at(1000));
    expect(await store.operators.findSession('s1')).toEqual({
      username: 'ani',
      createdAt: T0.toISOString(),
      lastSeenAt: at(1000).toISOString(),
      endedAt: null,
    });
    await store.operators.endSession('s1', at(2000));
    expect((await store.operators.findSession('s1'))?.endedAt).toBe(at(2000).toISOString());
    // Ending again, or touching an ended session, changes nothing.
    await store.operators.endSession('s1', at(3000));
    await store.operators.touchSession('s1', at(3000));
    expect(await store.operators.findSession('s1')).toMatchObject({
      lastSeenAt: at(1000).toISOString(),
      endedAt: at(2000).toISOString(),
    });
    await store.operators.touchSession('s2', at(3600));
    expect(await store.operators.endSessionsOf('ani', at(4000))).toBe(1);
    expect((await store.operators.findSession('s2'))?.endedAt).toBe(at(4000).toISOString());
    expect((await store.operators.findSession('s3'))?.endedAt).toBeNull();
    expect(await store.operators.findSession('unknown')).toBeUndefined();
    expect(await store.operators.pruneSessions(at(3500).toISOString())).toBe(2);
    expect(await store.operators.findSession('s1')).toBeUndefined();
    expect(await store.operators.findSession('s3')).toBeUndefined();
    expect(await store.operators.findSession('s2')).toBeDefined();
  });
});

describe.each(DATABASE_KINDS)('auth failures by scope (%s)', (kind) => {
  let store: Store;
  freshStoreEachTest(kind, (_db, s) => {
    store = s;
  });

  it("a scope's latest running lock over every client; clearing a scope forgets all of its clients", async () => {
    for (let i = 0; i < 3; i++) await store.authFailures.fail('operator:ani', '10.0.0.1', T0, POLICY);
    for (let i = 0; i < 3; i++) await store.authFailures.fail('operator:ani', '10.0.0.2', at(1000), POLICY);
    await store.authFailures.fail('operator:bea', '10.0.0.1', T0, POLICY);
    expect(await store.authFailures.lockedUntil('operator:ani', at(2000))).toBe(at(121_000).toISOString());
    expect(await store.authFailures.lockedUntil('operator:ani', at(121_000))).toBeNull();
    expect(await store.authFailures.lockedUntil('operator:bea', T0)).toBeNull();
    await store.authFailures.clearScope('operator:ani');
    expect(await store.authFailures.get('operator:ani', '10.0.0.1')).toBeUndefined();
    expect(await store.authFailures.get('operator:ani', '10.0.0.2')).toBeUndefined();
    expect(await store.authFailures.get('operator:bea', '10.0.0.1')).toEqual({ failures: 1, lockedUntil: null });
  });
});
