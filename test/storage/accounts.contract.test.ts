import { describe, expect, it } from 'vitest';
import { createHash, randomUUID } from 'node:crypto';
import { Migrator, sql } from 'kysely';
import { DATABASE_KINDS, freshDatabase, freshStoreEachTest } from '../helpers/stores.js';
import { newTransaction } from '../helpers/seed.js';
import { UniqueViolationError, type Store } from '../../src/storage/contract.js';
import { migrations } from '../../src/storage/kysely/migrations.js';
import { openStore, type KyselyBackedStore } from '../../src/storage/kysely/store.js';

const hash = (key: string) => createHash('sha256').update(key).digest('hex');

describe.each(DATABASE_KINDS)('storage contract: accounts (%s)', (kind) => {
  let store: Store;
  freshStoreEachTest(kind, (_d, s) => {
    store = s;
  });

  it('the same order id in two accounts is two payments; each account finds only its own', async () => {
    const b = store.forAccount('shop-b');
    const a1 = await store.transactions.insert(newTransaction({ orderId: 'SO-1:1', nominal: 10_000 }));
    const b1 = await b.transactions.insert(newTransaction({ orderId: 'SO-1:1', nominal: 20_000 }));
    expect(a1.account).toBe('default');
    expect(b1.account).toBe('shop-b');
    expect((await store.transactions.findByOrderId('SO-1:1'))?.nominal).toBe(10_000);
    expect((await b.transactions.findByOrderId('SO-1:1'))?.nominal).toBe(20_000);
    expect((await b.transactions.findByGatewayOrderId('SO-1.1'))?.id).toBe(b1.id);
    expect(await store.forAccount('other').transactions.findByOrderId('SO-1:1')).toBeUndefined();
    expect(await store.forAccount('other').transactions.latestForMercant('SO-1')).toBeUndefined();
    await expect(b.transactions.insert(newTransaction({ orderId: 'SO-1:1' }))).rejects.toBeInstanceOf(
      UniqueViolationError,
    );
    // Inside a transaction the view keeps its account.
    const locked = await b.transaction((tx) => tx.transactions.findForUpdate({ gatewayOrderId: 'SO-1.1' }));
    expect(locked?.id).toBe(b1.id);
    expect((await store.transactions.list({ account: 'shop-b' })).items.map((t) => t.id)).toEqual([b1.id]);
    expect((await store.transactions.list({})).items).toHaveLength(2);
  });

  it('idempotency keys, notifications and config are per account', async () => {
    const b = store.forAccount('shop-b');
    const o = { now: new Date(), retentionMs: 60_000, lockMs: 10_000 };
    expect((await store.idempotency.claim('s', 'k', 'h1', o)).claimed).toBe(true);
    expect((await b.idempotency.claim('s', 'k', 'h2', o)).claimed).toBe(true);
    expect((await b.idempotency.claim('s', 'k', 'h2', o)).claimed).toBe(false);
    expect((await b.idempotency.get('s', 'k'))?.requestHash).toBe('h2');
    const n = {
      dedupeKey: 'd1',
      gatewayOrderId: 'G',
      transactionRef: null,
      gatewayTransactionId: null,
      transactionStatus: 'pending',
      statusCode: '201',
      source: 'webhook',
      result: 'received',
      payload: '{}',
    } as const;
    expect((await store.notifications.record(n)).inserted).toBe(true);
    const inB = await b.notifications.record(n);
    expect(inB.inserted).toBe(true);
    expect((await b.notifications.findByDedupeKey('d1'))?.account).toBe('shop-b');
    expect(await store.forAccount('c').notifications.findByDedupeKey('d1')).toBeUndefined();
    expect(await b.config.put({ erp: { timeout_ms: 5 } }, 0, null)).toBeDefined();
    expect((await b.config.get())?.document).toEqual({ erp: { timeout_ms: 5 } });
    expect(await store.config.get()).toBeUndefined();
  });

  it('accounts: default exists, an id is unique, disabling is once', async () => {
    expect((await store.accounts.list()).map((a) => a.id)).toEqual(['default']);
    expect(await store.accounts.count()).toBe(1);
    const b = await store.accounts.insert({ id: 'shop-b', name: 'Shop B', merchantId: 'G1' }, new Date());
    expect(b).toMatchObject({ id: 'shop-b', merchantId: 'G1', disabledAt: null });
    await expect(
      store.accounts.insert({ id: 'shop-b', name: 'x', merchantId: null }, new Date()),
    ).rejects.toBeInstanceOf(UniqueViolationError);
    await store.accounts.setMerchantId('shop-b', 'G2');
    expect((await store.accounts.get('shop-b'))?.merchantId).toBe('G2');
    expect(await store.accounts.disable('shop-b', new Date())).toBe(true);
    expect(await store.accounts.disable('shop-b', new Date())).toBe(false);
    expect((await store.accounts.get('shop-b'))?.disabledAt).not.toBeNull();
    expect(await store.accounts.count()).toBe(2);
  });

  it('api keys: found by hash with their account state, listed without revoked ones, revoked once', async () => {
    await store.accounts.insert({ id: 'shop-b', name: 'Shop B', merchantId: null }, new Date());
    const k = await store.apiKeys.insert(
      { keyId: 'k1', account: 'shop-b', label: 'erp', keyHash: hash('pl_secret') },
      new Date(),
    );
    expect(k).toMatchObject({ keyId: 'k1', account: 'shop-b', revokedAt: null });
    expect(await store.apiKeys.findByHash(hash('pl_secret'))).toMatchObject({
      keyId: 'k1',
      account: 'shop-b',
      accountDisabled: false,
    });
    expect(await store.apiKeys.findByHash(hash('pl_other'))).toBeUndefined();
    await expect(
      store.apiKeys.insert({ keyId: 'k2', account: 'shop-b', label: null, keyHash: hash('pl_secret') }, new Date()),
    ).rejects.toBeInstanceOf(UniqueViolationError);
    await store.apiKeys.touch('k1', new Date('2026-01-01T00:00:00Z'));
    expect((await store.apiKeys.list('shop-b'))[0]?.lastUsedAt).toBe('2026-01-01T00:00:00.000Z');
    expect(await store.apiKeys.revoke('default', 'k1', new Date())).toBe(false);
    expect(await store.apiKeys.revoke('shop-b', 'k1', new Date())).toBe(true);
    expect(await store.apiKeys.revoke('shop-b', 'k1', new Date())).toBe(false);
    expect(await store.apiKeys.list('shop-b')).toEqual([]);
    expect((await store.apiKeys.findByHash(hash('pl_secret')))?.revokedAt).not.toBeNull();
    await store.accounts.disable('shop-b', new Date());
    expect((await store.apiKeys.findByHash(hash('pl_secret')))?.accountDisabled).toBe(true);
  });
});

describe.each(DATABASE_KINDS)('migration 027_accounts (%s)', (kind) => {
  it('an older database keeps every row, now in the default account, with its uniqueness per account', async () => {
    // A database as the previous version left it: every migration but 027.
    const older = freshDatabase(kind);
    const opened = await openOlder(older.config, older.schema);
    let store: KyselyBackedStore | undefined;
    try {
      const id = randomUUID();
      await sql`insert into transactions (id, order_id, gateway_order_id, mercant_id, kind, nominal, status, created_at, updated_at)
        values (${id}, 'OLD-1', 'OLD-1', 'OLD', 'payment_link', 5000, 'pending', '2026-01-01', '2026-01-01')`.execute(
        opened.db,
      );
      await sql`insert into notifications (dedupe_key, gateway_order_id, source, result, payload, received_at)
        values ('old-d', 'OLD-1', 'webhook', 'applied', '{}', '2026-01-01')`.execute(opened.db);
      await sql`insert into idempotency_records (scope, idem_key, request_hash, state, created_at, expires_at)
        values ('s', 'k', 'h', 'completed', '2026-01-01', '2999-01-01')`.execute(opened.db);
      await sql`insert into runtime_config (id, document, version, updated_at) values ('current', '{"erp":{"timeout_ms":7}}', 1, '2026-01-01')`.execute(
        opened.db,
      );
      await opened.close();
      store = await older.open();
      expect((await store.transactions.findByOrderId('OLD-1'))?.account).toBe('default');
      expect((await store.notifications.findByDedupeKey('old-d'))?.account).toBe('default');
      expect((await store.idempotency.get('s', 'k'))?.requestHash).toBe('h');
      expect((await store.config.get())?.document).toEqual({ erp: { timeout_ms: 7 } });
      await expect(store.transactions.insert(newTransaction({ orderId: 'OLD-1' }))).rejects.toBeInstanceOf(
        UniqueViolationError,
      );
      expect((await store.forAccount('b').transactions.insert(newTransaction({ orderId: 'OLD-1' }))).account).toBe('b');
      // Ids handed out before the copy are not handed out again.
      const n = await store.notifications.record({
        dedupeKey: 'new-d',
        gatewayOrderId: 'OLD-1',
        transactionRef: null,
        gatewayTransactionId: null,
        transactionStatus: null,
        statusCode: null,
        source: 'webhook',
        result: 'received',
        payload: '{}',
      });
      expect(n.inserted && n.id).toBeGreaterThan(1);
    } finally {
      await store?.close();
      await older.dispose();
    }
  });
});

/** Opens `config` migrated to every migration before 027, as the previous version would have. */
async function openOlder(
  config: Parameters<typeof openStore>[0],
  schema: string | undefined,
): Promise<{ db: KyselyBackedStore['db']; close: () => Promise<void> }> {
  const { Kysely, SqliteDialect, PostgresDialect } = await import('kysely');
  let db: KyselyBackedStore['db'];
  if (config.kind === 'sqlite') {
    const Sqlite = (await import('better-sqlite3')).default;
    db = new Kysely({ dialect: new SqliteDialect({ database: new Sqlite(config.path) }) });
  } else {
    const pg = (await import('pg')).default;
    const admin = new pg.Client({ connectionString: config.url });
    await admin.connect();
    await admin.query(`create schema if not exists ${schema ?? 'public'}`);
    await admin.end();
    db = new Kysely({
      dialect: new PostgresDialect({
        pool: new pg.Pool({ connectionString: config.url, options: `-c search_path=${schema ?? 'public'}` }),
      }),
    });
  }
  // The version before accounts: every migration before 027, none written since.
  const before = Object.fromEntries(Object.entries(migrations(config.kind)).filter(([name]) => name < '027'));
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => before },
    allowUnorderedMigrations: true,
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error;
  return { db, close: () => db.destroy() };
}
