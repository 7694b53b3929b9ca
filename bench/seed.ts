/** Databases for the bench: a fresh one per run (SQLite file, or a PostgreSQL database of its own), seeded through the real migrations. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../src/storage/kysely/schema.js';
import type { DatabaseConfig } from '../src/config/env.js';
import { openStore } from '../src/storage/kysely/store.js';

export interface BenchDatabase {
  config: DatabaseConfig;
  /** What the service's environment needs to use it. */
  env: Record<string, string>;
  drop(): Promise<void>;
}

export async function freshDatabase(
  kind: 'sqlite' | 'postgres',
  dir: string,
  adminUrl?: string,
): Promise<BenchDatabase> {
  const dataDir = path.join(dir, `data-${randomBytes(3).toString('hex')}`);
  fs.mkdirSync(dataDir, { recursive: true });
  if (kind === 'sqlite') {
    return {
      config: { kind, path: path.join(dataDir, 'paylink.db') },
      env: { DATA_DIR: dataDir },
      drop: async () => fs.rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  if (!adminUrl) throw new Error('PostgreSQL needs BENCH_DATABASE_URL');
  const name = `paylink_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`).finally(() => admin.end());
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  const url = u.toString();
  return {
    config: { kind, url },
    env: { DATA_DIR: dataDir, DATABASE_URL: url },
    drop: async () => {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`).finally(() => c.end());
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * For each of `sizes`, `fn` on a fresh database of its own (PostgreSQL: created from
 * `BENCH_DATABASE_URL`), dropped after it: the storage benches' shape (claim-behind.ts, due-now.ts).
 */
export async function eachFreshDatabase(
  kind: 'sqlite' | 'postgres',
  sizes: readonly number[],
  fn: (n: number, db: BenchDatabase) => Promise<void>,
): Promise<void> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'paylink-bench-db-'));
  try {
    for (const n of sizes) {
      const db = await freshDatabase(kind, tmp, process.env.BENCH_DATABASE_URL);
      try {
        await fn(n, db);
      } finally {
        await db.drop();
      }
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

export interface KnownOrder {
  orderId: string;
  nominal: number;
}

/** Pending Core API charges the service knows (of `account`, else the default one), as if created through it (the webhook's usual case). */
export async function seedOrders(db: DatabaseConfig, orders: KnownOrder[], account?: string): Promise<void> {
  const store = await openStore(db);
  const mine = account ? store.forAccount(account) : store;
  try {
    for (let i = 0; i < orders.length; i += 500) {
      await mine.transaction(async (tx) => {
        for (const o of orders.slice(i, i + 500)) {
          await tx.transactions.insert({
            id: randomUUID(),
            orderId: o.orderId,
            gatewayOrderId: o.orderId,
            mercantId: o.orderId.split('-')[0] ?? o.orderId,
            kind: 'charge',
            attempt: 1,
            nominal: o.nominal,
            status: 'pending',
            paymentUrl: null,
            paymentLinkId: null,
            snapToken: null,
            requestHash: null,
            requestJson: null,
            gatewayJson: null,
            expireAt: null,
          });
        }
      });
    }
  } finally {
    await store.close();
  }
}

/**
 * The growth scenario: `n` settled transactions spread over the last 90 days, each with its
 * notification, one delivered ERP event and its attempt.
 */
export async function seedHistory(db: DatabaseConfig, n: number): Promise<void> {
  const store = await openStore(db);
  try {
    if (store.kind === 'sqlite') {
      const at = sql.raw(
        `strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-' || (i % 90) || ' days', '-' || (i % 86400) || ' seconds')`,
      );
      const series = sql.raw(`with recursive c(i) as (select 1 union all select i + 1 from c where i < ${n})`);
      await store.transaction(async (tx) => {
        await sql`${series} insert into transactions (id, order_id, gateway_order_id, mercant_id, kind, attempt, nominal, status, transaction_status, gateway_transaction_id, status_version, created_at, updated_at, last_event_at)
          select 'seed-' || i, 'SEED-' || i, 'SEED-' || i, 'SEED' || (i % 1000), 'charge', 1, 10000 + i, case when i % 10 = 0 then 'pending' else 'paid' end, 'settlement', 'seed-tx-' || i, 1, ${at}, ${at}, ${at} from c`.execute(
          tx.db,
        );
        await sql`${series} insert into notifications (dedupe_key, gateway_order_id, transaction_ref, gateway_transaction_id, transaction_status, status_code, source, result, payload, received_at)
          select 'seed-' || i, 'SEED-' || i, 'seed-' || i, 'seed-tx-' || i, 'settlement', '200', 'webhook', 'applied', '{}', ${at} from c`.execute(
          tx.db,
        );
        await sql`${series} insert into outbox_events (event_id, event_type, order_key, order_id, mercant_id, status_version, payload, state, attempts, next_attempt_at, lease_token, last_status_code, created_at, updated_at, delivered_at, retry_from)
          select 'seed-ev-' || i, 'payment.status_changed', 'SEED-' || i, 'SEED-' || i, 'SEED' || (i % 1000), 1, '{}', 'delivered', 1, ${at}, 1, 204, ${at}, ${at}, ${at}, ${at} from c`.execute(
          tx.db,
        );
        await sql`${series} insert into delivery_attempts (event_seq, attempt_no, started_at, status_code, latency_ms, outcome, instance)
          select i, 1, ${at}, 204, 3, 'delivered', 'seed' from c`.execute(tx.db);
      });
    } else {
      const at = sql.raw(
        `to_char((now() at time zone 'utc') - (i % 90) * interval '1 day' - (i % 86400) * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
      );
      const from = sql.raw(`from generate_series(1, ${n}) as i`);
      await store.transaction(async (tx) => {
        // A million rows take longer than the service's statement timeout.
        await sql`set local statement_timeout = 0`.execute(tx.db);
        await seedPostgres(tx.db, at, from);
      });
    }
  } finally {
    await store.close();
  }
}

async function seedPostgres(db: Kysely<Database>, at: RawBuilder<unknown>, from: RawBuilder<unknown>): Promise<void> {
  await sql`insert into transactions (id, order_id, gateway_order_id, mercant_id, kind, attempt, nominal, status, transaction_status, gateway_transaction_id, status_version, created_at, updated_at, last_event_at)
    select 'seed-' || i, 'SEED-' || i, 'SEED-' || i, 'SEED' || (i % 1000), 'charge', 1, 10000 + i, case when i % 10 = 0 then 'pending' else 'paid' end, 'settlement', 'seed-tx-' || i, 1, ${at}, ${at}, ${at} ${from}`.execute(
    db,
  );
  await sql`insert into notifications (dedupe_key, gateway_order_id, transaction_ref, gateway_transaction_id, transaction_status, status_code, source, result, payload, received_at)
    select 'seed-' || i, 'SEED-' || i, 'seed-' || i, 'seed-tx-' || i, 'settlement', '200', 'webhook', 'applied', '{}', ${at} ${from}`.execute(
    db,
  );
  await sql`insert into outbox_events (event_id, event_type, order_key, order_id, mercant_id, status_version, payload, state, attempts, next_attempt_at, lease_token, last_status_code, created_at, updated_at, delivered_at, retry_from)
    select 'seed-ev-' || i, 'payment.status_changed', 'SEED-' || i, 'SEED-' || i, 'SEED' || (i % 1000), 1, '{}', 'delivered', 1, ${at}, 1, 204, ${at}, ${at}, ${at}, ${at} ${from}`.execute(
    db,
  );
  await sql`insert into delivery_attempts (event_seq, attempt_no, started_at, status_code, latency_ms, outcome, instance)
    select i, 1, ${at}, 204, 3, 'delivered', 'seed' ${from}`.execute(db);
  await sql`analyze`.execute(db);
}

/** Events waiting for an ERP that is down: failed once, next attempt in an hour, each its own order. */
/**
 * `n` orders whose first event failed and is retried in an hour (a down ERP). With `behind`, each
 * order also has a second event written after it and due now, which must wait for the first: the
 * backlog of an ERP down for days, where a claim may take none of them.
 */
export async function seedWaiting(db: DatabaseConfig, n: number, tag: string, behind = false): Promise<void> {
  const store = await openStore(db);
  const later = new Date(Date.now() + 3_600_000).toISOString();
  const now = new Date().toISOString();
  try {
    const event = (k: number, second: boolean) => ({
      event_id: `wait-${tag}-${k}${second ? '-2' : ''}`,
      event_type: 'payment.status_changed',
      order_key: `WAIT-${tag}-${k}`,
      order_id: `WAIT-${tag}-${k}`,
      mercant_id: 'WAIT',
      status_version: second ? 2 : 1,
      payload: '{}',
      state: second ? 'pending' : 'failed',
      attempts: second ? 0 : 1,
      next_attempt_at: second ? now : later,
      lease_token: second ? 0 : 1,
      created_at: now,
      updated_at: now,
      retry_from: now,
    });
    const rows = (from: number, to: number, second: boolean) =>
      Array.from({ length: to - from }, (_, k) => event(from + k, second));
    for (const second of behind ? [false, true] : [false])
      for (let i = 0; i < n; i += 2000)
        await store.db
          .insertInto('outbox_events')
          .values(rows(i, Math.min(n, i + 2000), second))
          .execute();
  } finally {
    await store.close();
  }
}
