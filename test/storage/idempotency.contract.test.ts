import { describe, expect, it } from 'vitest';
import { DATABASE_KINDS, freshStoreEachTest } from '../helpers/stores.js';
import type { Store } from '../../src/storage/contract.js';

const T0 = new Date('2026-11-22T03:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
const O = { now: T0, retentionMs: 24 * 3_600_000, lockMs: 60_000 };

describe.each(DATABASE_KINDS)('idempotency repository (%s)', (kind) => {
  let store: Store;
  freshStoreEachTest(kind, (_db, s) => {
    store = s;
  });

  it('claims a new key once; the second claimant sees the in-flight record', async () => {
    const first = await store.idempotency.claim('s', 'k', 'h1', O);
    expect(first).toEqual({ claimed: true, token: at(60_000).toISOString() });
    const second = await store.idempotency.claim('s', 'k', 'h1', { ...O, now: at(1000) });
    expect(second).toMatchObject({
      claimed: false,
      record: {
        state: 'in_flight',
        requestHash: 'h1',
        responseStatus: null,
        expiresAt: at(24 * 3_600_000).toISOString(),
      },
    });
    // Scopes are separate key spaces.
    expect((await store.idempotency.claim('other', 'k', 'h1', O)).claimed).toBe(true);
  });

  it('completes with the response, which later claimants get back', async () => {
    const c = await store.idempotency.claim('s', 'k', 'h1', O);
    if (!c.claimed) throw new Error('not claimed');
    expect(await store.idempotency.complete('s', 'k', c.token, 201, '{"a":1}')).toBe(true);
    const again = await store.idempotency.claim('s', 'k', 'h1', { ...O, now: at(120_000) });
    expect(again).toMatchObject({
      claimed: false,
      record: { state: 'completed', responseStatus: 201, responseBody: '{"a":1}', lockedUntil: null },
    });
  });

  it('release forgets the claim so the key can be used again', async () => {
    const c = await store.idempotency.claim('s', 'k', 'h1', O);
    if (!c.claimed) throw new Error('not claimed');
    expect(await store.idempotency.release('s', 'k', c.token)).toBe(true);
    expect(await store.idempotency.get('s', 'k')).toBeUndefined();
    expect((await store.idempotency.claim('s', 'k', 'h2', O)).claimed).toBe(true);
  });

  it('a crashed claim is taken over after its lock expires (same request only); the old owner is fenced off', async () => {
    const c = await store.idempotency.claim('s', 'k', 'h1', O);
    if (!c.claimed) throw new Error('not claimed');
    expect((await store.idempotency.claim('s', 'k', 'h1', { ...O, now: at(59_999) })).claimed).toBe(false);
    expect((await store.idempotency.claim('s', 'k', 'h2', { ...O, now: at(61_000) })).claimed).toBe(false);
    const takeover = await store.idempotency.claim('s', 'k', 'h1', { ...O, now: at(61_000) });
    expect(takeover.claimed).toBe(true);
    expect(await store.idempotency.complete('s', 'k', c.token, 201, 'old')).toBe(false);
    expect(await store.idempotency.release('s', 'k', c.token)).toBe(false);
    if (!takeover.claimed) throw new Error('not claimed');
    expect(await store.idempotency.complete('s', 'k', takeover.token, 201, 'new')).toBe(true);
    expect((await store.idempotency.get('s', 'k'))?.responseBody).toBe('new');
  });

  it('an expired record frees its key, and pruning deletes only expired records', async () => {
    const c = await store.idempotency.claim('s', 'k', 'h1', O);
    if (!c.claimed) throw new Error('not claimed');
    await store.idempotency.complete('s', 'k', c.token, 201, 'x');
    await store.idempotency.claim('s', 'later', 'h1', { ...O, now: at(3_600_000) });
    const reuse = await store.idempotency.claim('s', 'k', 'h-different', { ...O, now: at(24 * 3_600_000) });
    expect(reuse.claimed).toBe(true);
    await store.idempotency.claim('s', 'gone', 'h1', O);
    expect(await store.idempotency.pruneExpired(at(24 * 3_600_000 + 1))).toBe(1);
    expect(await store.idempotency.get('s', 'gone')).toBeUndefined();
    expect(await store.idempotency.get('s', 'later')).toBeDefined();
    expect(await store.idempotency.get('s', 'k')).toBeDefined();
  });

  it('of many concurrent claims exactly one wins', async () => {
    const results = await Promise.all(Array.from({ length: 30 }, () => store.idempotency.claim('s', 'race', 'h1', O)));
    expect(results.filter((r) => r.claimed)).toHaveLength(1);
  });

  it('of many concurrent take-overs of an expired record exactly one wins', async () => {
    await store.idempotency.claim('s', 'race', 'h1', O);
    const later = { ...O, now: at(25 * 3_600_000) };
    const results = await Promise.all(
      Array.from({ length: 30 }, () => store.idempotency.claim('s', 'race', 'h2', later)),
    );
    expect(results.filter((r) => r.claimed)).toHaveLength(1);
  });
});
