/**
 * The word between PostgreSQL instances (LISTEN/NOTIFY, src/storage/postgres/signals.ts): one
 * store's announcement reaches another's listener; when the listening connection is killed it comes
 * back and works again; a listener that cannot connect says it is not live, so the feed's waiting
 * pulls poll at their short interval.
 */
import { afterEach, describe, expect, it } from 'vitest';
import pg from 'pg';
import { TEST_DATABASE_URL, freshDatabase, type TestDatabase } from '../helpers/stores.js';
import type { KyselyBackedStore } from '../../src/storage/kysely/store.js';
import { postgresSignals } from '../../src/storage/postgres/signals.js';
import { pgConnection } from '../../src/storage/postgres/tls.js';
import { createFeedWake } from '../../src/domain/erp-events/feed-wake.js';
import { accountCount, accountsChanged, eventAccount } from '../../src/domain/accounts/events.js';

describe.runIf(TEST_DATABASE_URL)('PostgreSQL commit signals', () => {
  const opened: KyselyBackedStore[] = [];
  let db: TestDatabase | undefined;
  afterEach(async () => {
    for (const s of opened.splice(0)) await s.close();
    await db?.dispose();
    db = undefined;
  });

  async function twoInstances(): Promise<[KyselyBackedStore, KyselyBackedStore]> {
    db = freshDatabase('postgres');
    const a = await db.open();
    const b = await db.open();
    opened.push(a, b);
    return [a, b];
  }

  it("one instance's announcement reaches the other's listener, not its own; after the listener is killed it reconnects", async () => {
    const [a, b] = await twoInstances();
    let heardByB = 0;
    let heardByA = 0;
    b.signals.listen('erp_events', () => heardByB++);
    a.signals.listen('erp_events', () => heardByA++);
    await expect.poll(() => a.signals.live && b.signals.live, { timeout: 10_000, interval: 5 }).toBe(true);
    const [b0, a0] = [heardByB, heardByA];
    a.signals.announce('erp_events');
    await expect.poll(() => heardByB, { timeout: 10_000, interval: 5 }).toBeGreaterThan(b0);
    expect(heardByA).toBe(a0);

    // Kill B's listening connection from outside: it must notice, come back, and hear again.
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    try {
      const { rowCount } = await admin.query(
        `select pg_terminate_backend(pid) from pg_stat_activity where query ilike $1 and pid <> pg_backend_pid()`,
        [`listen paylink_${db?.schema ?? ''}_erp_events`],
      );
      expect(rowCount).toBeGreaterThanOrEqual(1);
    } finally {
      await admin.end();
    }
    await expect.poll(() => b.signals.live, { timeout: 10_000, interval: 5 }).toBe(false);
    await expect.poll(() => b.signals.live, { timeout: 20_000, interval: 20 }).toBe(true);
    const b1 = heardByB;
    a.signals.announce('erp_events');
    await expect.poll(() => heardByB, { timeout: 10_000, interval: 5 }).toBeGreaterThan(b1);
  });

  it('an account created on one instance is counted at once by the other, whose count is kept between notifications', async () => {
    const [a, b] = await twoInstances();
    await expect.poll(() => accountCount(a), { timeout: 10_000, interval: 5 }).toBe(1);
    // Once a listens, its count is kept: the next reads do not see a row inserted behind its back.
    await expect.poll(() => a.signals.live, { timeout: 10_000, interval: 5 }).toBe(true);
    expect(await accountCount(a)).toBe(1);
    await b.accounts.insert({ id: 'second', name: 'Second', merchantId: null }, new Date());
    // Without the word, a's kept count would say 1 for ever.
    expect(await accountCount(a)).toBe(1);
    accountsChanged(b);
    await expect.poll(() => accountCount(a), { timeout: 10_000, interval: 5 }).toBe(2);
    expect(await eventAccount(a, 'default')).toBe('default');
  });

  it('a listener that cannot connect is not live: a waiting pull polls at the short interval', async () => {
    // A port nothing listens on.
    const signals = postgresSignals({
      connection: pgConnection('postgres://postgres@127.0.0.1:1/none'),
      retryMs: 60_000,
    });
    try {
      const wake = createFeedWake(signals, { pollMs: 20, livePollMs: 600_000 });
      const reason = await wake.wait(wake.generation, 600_000);
      expect(reason).toBe('polled');
      expect(signals.live).toBe(false);
      wake.close();
    } finally {
      await signals.close();
    }
  });
});
