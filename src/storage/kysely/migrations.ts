import { randomBytes } from 'node:crypto';
import { sql, type Kysely, type Migration, type MigrationProvider, type RawBuilder } from 'kysely';

type Kind = 'sqlite' | 'postgres';

/** Column types that differ between the two databases. */
interface Dialect {
  big: 'bigint' | 'integer';
  autoId: (col: string) => RawBuilder<unknown>;
}

function dialect(kind: Kind): Dialect {
  return {
    big: kind === 'postgres' ? 'bigint' : 'integer',
    autoId: (col) =>
      kind === 'postgres'
        ? sql`${sql.ref(col)} bigserial primary key`
        : sql`${sql.ref(col)} integer primary key autoincrement`,
  };
}

async function createTransactions(db: Kysely<unknown>, { big }: Dialect): Promise<void> {
  await db.schema
    .createTable('transactions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('order_id', 'text', (c) => c.notNull().unique())
    .addColumn('gateway_order_id', 'text', (c) => c.notNull().unique())
    .addColumn('mercant_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('nominal', big, (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('transaction_status', 'text')
    .addColumn('fraud_status', 'text')
    .addColumn('payment_type', 'text')
    .addColumn('gateway_transaction_id', 'text')
    .addColumn('payment_url', 'text')
    .addColumn('payment_link_id', 'text')
    .addColumn('snap_token', 'text')
    .addColumn('request_hash', 'text')
    .addColumn('request_json', 'text')
    .addColumn('gateway_json', 'text')
    .addColumn('expire_at', 'text')
    .addColumn('settlement_time', 'text')
    .addColumn('transaction_time', 'text')
    .addColumn('status_version', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('flags', 'text')
    .addColumn('last_event_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('transactions_mercant_idx')
    .on('transactions')
    .columns(['mercant_id', 'attempt'])
    .execute();
  await db.schema.createIndex('transactions_status_idx').on('transactions').columns(['status', 'expire_at']).execute();
  await db.schema.createIndex('transactions_created_idx').on('transactions').columns(['created_at', 'id']).execute();
  await db.schema.createIndex('transactions_gwtx_idx').on('transactions').column('gateway_transaction_id').execute();
}

async function createNotifications(db: Kysely<unknown>, { autoId }: Dialect): Promise<void> {
  await sql`create table notifications (
    ${autoId('id')},
    dedupe_key text not null unique,
    gateway_order_id text not null,
    transaction_ref text,
    gateway_transaction_id text,
    transaction_status text,
    status_code text,
    source text not null,
    result text not null,
    payload text not null,
    received_at text not null
  )`.execute(db);
  await db.schema
    .createIndex('notifications_order_idx')
    .on('notifications')
    .columns(['gateway_order_id', 'id'])
    .execute();
}

async function createOutbox(db: Kysely<unknown>, { autoId, big }: Dialect): Promise<void> {
  await sql`create table outbox_events (
    ${autoId('seq')},
    event_id text not null unique,
    event_type text not null,
    order_key text not null,
    order_id text,
    mercant_id text,
    status_version integer,
    payload text not null,
    state text not null,
    attempts integer not null default 0,
    next_attempt_at text not null,
    lease_owner text,
    lease_until text,
    lease_token integer not null default 0,
    last_status_code integer,
    last_error text,
    created_at text not null,
    updated_at text not null,
    delivered_at text
  )`.execute(db);
  await db.schema.createIndex('outbox_due_idx').on('outbox_events').columns(['state', 'next_attempt_at']).execute();
  await db.schema.createIndex('outbox_order_idx').on('outbox_events').columns(['order_key', 'seq']).execute();

  await sql`create table delivery_attempts (
    ${autoId('id')},
    event_seq ${sql.raw(big)} not null,
    attempt_no integer not null,
    started_at text not null,
    status_code integer,
    latency_ms integer,
    error text,
    outcome text not null,
    instance text
  )`.execute(db);
  await db.schema
    .createIndex('delivery_attempts_event_idx')
    .on('delivery_attempts')
    .columns(['event_seq', 'id'])
    .execute();
}

async function createIdempotencyAndConfig(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('idempotency_records')
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('idem_key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('response_status', 'integer')
    .addColumn('response_body', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('locked_until', 'text')
    .addPrimaryKeyConstraint('idempotency_pk', ['scope', 'idem_key'])
    .execute();
  await db.schema.createIndex('idempotency_expiry_idx').on('idempotency_records').column('expires_at').execute();

  await db.schema
    .createTable('runtime_config')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('document', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('updated_by', 'text')
    .execute();
}

/** Migrations live in code (not files) so the built service and tests run the same list. */
export function migrations(kind: Kind): Record<string, Migration> {
  const d = dialect(kind);
  return {
    '001_initial': {
      async up(db: Kysely<unknown>) {
        await createTransactions(db, d);
        await createNotifications(db, d);
        await createOutbox(db, d);
        await createIdempotencyAndConfig(db);
      },
    },
    '003_outbox_retry_window': outboxMigration003,
    '004_reconcile_checked_at': reconcileMigration004,
    '005_list_and_retention_indexes': listAndRetentionMigration005,
    '010_auth_failures': authFailuresMigration010,
    '015_refunds': refundsMigration015(d),
    '020_notifications_checked_at': notificationsMigration020,
    '021_outbox_claim_indexes': outboxClaimMigration021,
    '022_refund_leases_and_reasons': refundLeasesMigration022,
    '023_money_and_pull_feed': moneyAndFeedMigration023(d),
    '024_reconciliation': reconciliationMigration024(d),
    '025_feed_positions': feedPositionsMigration025(d),
    '026_reconciliation_unit': reconciliationUnitMigration026(d),
    '027_accounts': accountsMigration027(kind),
    '028_operators': operatorsMigration028,
    '030_trace_context': traceContextMigration030,
    '036_link_purchases': linkPurchasesMigration036,
    '037_reconciliation_chargebacks': reconciliationChargebacksMigration037,
    '032_outbox_account_lanes': outboxAccountLanesMigration032,
    '033_outbox_alert_lane': outboxAlertLaneMigration033(kind),
    '038_outbox_account_oldest': outboxAccountOldestMigration038,
    '039_transaction_carrier': transactionCarrierMigration039,
    '040_reconciliation_source': reconciliationSourceMigration040,
    '041_outbox_autovacuum': outboxAutovacuumMigration041(kind),
    '042_outbox_lanes': outboxLanesMigration042(kind),
  };
}

/** Outbox: the start of an event's current retry window (a manual retry opens a new one), and a lookup for unverified notifications. */
export const outboxMigration003: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('outbox_events').addColumn('retry_from', 'text').execute();
    await db.schema.createIndex('notifications_result_idx').on('notifications').columns(['result', 'id']).execute();
    await db.schema
      .createIndex('notifications_ref_idx')
      .on('notifications')
      .columns(['transaction_ref', 'gateway_transaction_id'])
      .execute();
  },
};

/** Transactions: when the reconciler last asked about one, so every overdue order gets its turn. */
export const reconcileMigration004: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('transactions').addColumn('checked_at', 'text').execute();
  },
};

/** Unverified notifications are rechecked least recently checked first, so failing ones cannot starve newer ones. */
export const notificationsMigration020: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('notifications').addColumn('checked_at', 'text').execute();
  },
};

/**
 * Filtered pages stay as cheap with a million rows as with ten (newest first within a status, a
 * mercant id or a delivery state), and retention finds what is old without a scan.
 */
export const listAndRetentionMigration005: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createIndex('transactions_status_created_idx')
      .on('transactions')
      .columns(['status', 'created_at', 'id'])
      .execute();
    await db.schema
      .createIndex('transactions_mercant_created_idx')
      .on('transactions')
      .columns(['mercant_id', 'created_at', 'id'])
      .execute();
    await db.schema.createIndex('outbox_state_seq_idx').on('outbox_events').columns(['state', 'seq']).execute();
    await db.schema
      .createIndex('outbox_delivered_idx')
      .on('outbox_events')
      .columns(['state', 'delivered_at'])
      .execute();
    await db.schema.createIndex('notifications_received_idx').on('notifications').column('received_at').execute();
  },
};

/**
 * The outbox's claim and next-due queries walk only the events that can be claimed, in due order,
 * and stop at the first ones that qualify: with 100,000 events waiting for an ERP that is down
 * (all due later), claiming costs what it costs with ten. Both databases take partial indexes.
 */
export const outboxClaimMigration021: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`create index outbox_claimable_idx on outbox_events (next_attempt_at, seq) where state in ('pending', 'failed')`.execute(
      db,
    );
    await sql`create index outbox_leased_idx on outbox_events (lease_until) where lease_until is not null`.execute(db);
    // Replaced by the partial index: one index fewer to maintain on every event written or moved on.
    await db.schema.dropIndex('outbox_due_idx').execute();
  },
};

/** Failed authentication attempts per client, shared by every instance. */
export const authFailuresMigration010: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('auth_failures')
      .addColumn('scope', 'text', (c) => c.notNull())
      .addColumn('client', 'text', (c) => c.notNull())
      .addColumn('failures', 'integer', (c) => c.notNull())
      .addColumn('window_start', 'text', (c) => c.notNull())
      .addColumn('locked_until', 'text')
      .addPrimaryKeyConstraint('auth_failures_pk', ['scope', 'client'])
      .execute();
  },
};

/** Refund requests, each with its gateway `refund_key`, and the cumulative refunded amount of a payment. */
export function refundsMigration015({ big }: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await sql`alter table transactions add column refunded_amount ${sql.raw(big)} not null default 0`.execute(db);
      await db.schema
        .createTable('refunds')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('transaction_ref', 'text', (c) => c.notNull())
        .addColumn('refund_key', 'text', (c) => c.notNull().unique())
        .addColumn('amount', big)
        .addColumn('reason', 'text')
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('actor', 'text', (c) => c.notNull())
        .addColumn('gateway_code', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('refunds_tx_idx').on('refunds').columns(['transaction_ref', 'state']).execute();
    },
  };
}

/**
 * Refunds are serialised per payment: a request holds a lease while it calls the gateway, and a
 * retry of the same request (same Idempotency-Key) finds its own refund again. Notifications keep
 * why they were not applied.
 */
export const refundLeasesMigration022: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('notifications').addColumn('reason', 'text').execute();
    await db.schema.alterTable('refunds').addColumn('lease_until', 'text').execute();
    await db.schema.alterTable('refunds').addColumn('request_key', 'text').execute();
    await db.schema
      .createIndex('refunds_request_idx')
      .on('refunds')
      .columns(['transaction_ref', 'request_key'])
      .execute();
  },
};

/**
 * The money the gateway reports beside the order's amount (paid, original before a fee or promo,
 * fee and net from a settlement report), the pull feed's position of each ERP event, and the
 * database's own identity with the key that signs its feed cursors (so a cursor of another database,
 * or a forged one, is refused).
 */
export function moneyAndFeedMigration023({ big }: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      for (const col of ['paid_amount', 'original_amount', 'fee_amount', 'net_amount'])
        await db.schema.alterTable('transactions').addColumn(col, sql.raw(big)).execute();
      await db.schema.alterTable('outbox_events').addColumn('feed_seq', sql.raw(big)).execute();
      await sql`create unique index outbox_feed_idx on outbox_events (feed_seq) where feed_seq is not null`.execute(db);
      await sql`create index outbox_unsequenced_idx on outbox_events (seq) where feed_seq is null`.execute(db);
      await db.schema
        .createTable('paylink_meta')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();
      await sql`insert into paylink_meta (key, value) values ('database_id', ${randomBytes(16).toString('hex')}), ('feed_cursor_key', ${randomBytes(32).toString('hex')})`.execute(
        db,
      );
    },
  };
}

/** Imports of the gateway's reports and every row's result; the same file (by its hash) is imported once. */
export function reconciliationMigration024({ autoId, big }: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('reconciliation_imports')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('file_sha256', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('rows', 'integer', (c) => c.notNull())
        .addColumn('matched', 'integer', (c) => c.notNull())
        .addColumn('missing_here', 'integer', (c) => c.notNull())
        .addColumn('missing_at_gateway', 'integer', (c) => c.notNull())
        .addColumn('amount_mismatch', 'integer', (c) => c.notNull())
        .addColumn('status_mismatch', 'integer', (c) => c.notNull())
        .addColumn('covers_from', 'text')
        .addColumn('covers_to', 'text')
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('finished_at', 'text')
        .execute();
      await sql`create unique index reconciliation_file_idx on reconciliation_imports (file_sha256) where state = 'done'`.execute(
        db,
      );
      await db.schema
        .createIndex('reconciliation_created_idx')
        .on('reconciliation_imports')
        .columns(['created_at', 'id'])
        .execute();
      await sql`create table reconciliation_rows (
        ${autoId('id')},
        import_id text not null,
        line integer,
        result text not null,
        gateway_order_id text not null,
        order_id text,
        transaction_ref text,
        report_status text,
        report_amount ${sql.raw(big)},
        fee_amount ${sql.raw(big)},
        net_amount ${sql.raw(big)},
        paylink_status text,
        paylink_amount ${sql.raw(big)},
        detail text
      )`.execute(db);
      await db.schema
        .createIndex('reconciliation_rows_idx')
        .on('reconciliation_rows')
        .columns(['import_id', 'result', 'id'])
        .execute();
      await db.schema
        .createIndex('reconciliation_rows_order_idx')
        .on('reconciliation_rows')
        .columns(['import_id', 'id'])
        .execute();
    },
  };
}

/**
 * The highest feed position a pull has handed out: an acknowledgement marks nothing beyond it. A
 * database migrated from before it cannot tell which of its sequenced events were handed out, and
 * every one may have been (positions are given only by a pull), so it starts at the highest given.
 */
export function feedPositionsMigration025({ big }: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('feed_positions')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('position', sql.raw(big), (c) => c.notNull())
        .execute();
      await sql`insert into feed_positions (name, position) select 'handed_out', coalesce(max(feed_seq), 0) from outbox_events where feed_seq is not null`.execute(
        db,
      );
    },
  };
}

/**
 * A reconciliation import written as one unit: the count of rows whose transaction id is another
 * payment's, and, on each matched row, the payment's amount and paid amount as they were when it
 * matched (the fee write checks them, with the status, in the same transaction); rows found by
 * their payment.
 */
export function reconciliationUnitMigration026({ big }: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable('reconciliation_imports')
        .addColumn('transaction_mismatch', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.alterTable('reconciliation_rows').addColumn('matched_nominal', sql.raw(big)).execute();
      await db.schema.alterTable('reconciliation_rows').addColumn('matched_paid_amount', sql.raw(big)).execute();
      // Whether a payment has a row in an import (the missing-at-gateway scan asks it of every paid payment of the report's days).
      await db.schema
        .createIndex('reconciliation_rows_ref_idx')
        .on('reconciliation_rows')
        .columns(['import_id', 'transaction_ref'])
        .execute();
    },
  };
}

/** A table whose inline unique or primary-key constraint changes: SQLite cannot drop one, so the table is copied into a new one. */
async function rebuildSqliteTable(
  db: Kysely<unknown>,
  table: string,
  edit: (createSql: string) => string,
): Promise<void> {
  const { rows } = await sql<{
    type: string;
    sql: string | null;
  }>`select type, sql from sqlite_master where tbl_name = ${table} and sql is not null`.execute(db);
  const create = rows.find((r) => r.type === 'table')?.sql;
  if (!create) throw new Error(`no table ${table}`);
  const temp = `${table}_rebuilt`;
  const edited = edit(create).replace(/^CREATE TABLE\s+("?)[a-z_]+\1/i, `CREATE TABLE "${temp}"`);
  if (edited === create) throw new Error(`${table}: nothing to change`);
  await sql.raw(edited).execute(db);
  const cols = (await sql<{ name: string }>`select name from pragma_table_info(${table})`.execute(db)).rows
    .map((c) => `"${c.name}"`)
    .join(', ');
  const seq = await sql<{ seq: number }>`select seq from sqlite_sequence where name = ${table}`
    .execute(db)
    .catch(() => ({ rows: [] }));
  await sql.raw(`insert into "${temp}" (${cols}) select ${cols} from "${table}"`).execute(db);
  await sql.raw(`drop table "${table}"`).execute(db);
  await sql.raw(`alter table "${temp}" rename to "${table}"`).execute(db);
  const last = seq.rows[0]?.seq;
  // An id once handed out is never handed out again, even when its row was pruned before the copy.
  if (last !== undefined)
    await sql`update sqlite_sequence set seq = max(seq, ${last}) where name = ${table}`.execute(db);
  for (const r of rows) if (r.type === 'index') await sql.raw(r.sql ?? '').execute(db);
}

/** Drops one column's inline `unique` (SQLite's table text as Kysely or the raw DDL above wrote it). */
function withoutInlineUnique(column: string): (createSql: string) => string {
  return (s) => s.replace(new RegExp(`((?<![a-z_])"?${column}"?\\s+text\\s+not null)\\s+unique`, 'i'), '$1');
}

/** The tables whose rows belong to an account, with every row of an older database in `default`. */
const ACCOUNT_TABLES = [
  'transactions',
  'notifications',
  'outbox_events',
  'refunds',
  'idempotency_records',
  'reconciliation_imports',
  'runtime_config',
] as const;

/**
 * Accounts (one Midtrans merchant each), their API keys (a SHA-256 of a random key: the lookup by
 * hash is a primary-key-like read and needs no slow hash), and the account of every row. Each
 * uniqueness rule that names an order id, a gateway order id, a notification, an idempotency key or
 * an imported file holds per account: the same order id in two accounts is two payments.
 */
export function accountsMigration027(kind: Kind): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('accounts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('merchant_id', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('disabled_at', 'text')
        .execute();
      await sql`insert into accounts (id, name, merchant_id, created_at) values ('default', 'default', null, ${new Date().toISOString()})`.execute(
        db,
      );
      await db.schema
        .createTable('api_keys')
        .addColumn('key_id', 'text', (c) => c.primaryKey())
        .addColumn('account', 'text', (c) => c.notNull())
        .addColumn('label', 'text')
        .addColumn('key_hash', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('last_used_at', 'text')
        .addColumn('revoked_at', 'text')
        .execute();
      await db.schema.createIndex('api_keys_account_idx').on('api_keys').columns(['account', 'created_at']).execute();
      for (const table of ACCOUNT_TABLES)
        await sql`alter table ${sql.table(table)} add column account text not null default 'default'`.execute(db);
      if (kind === 'sqlite') {
        await rebuildSqliteTable(db, 'transactions', (s) =>
          withoutInlineUnique('gateway_order_id')(withoutInlineUnique('order_id')(s)),
        );
        await rebuildSqliteTable(db, 'notifications', withoutInlineUnique('dedupe_key'));
        await rebuildSqliteTable(db, 'idempotency_records', (s) =>
          s.replace('primary key ("scope", "idem_key")', 'primary key ("account", "scope", "idem_key")'),
        );
      } else {
        await sql`alter table transactions drop constraint transactions_order_id_key`.execute(db);
        await sql`alter table transactions drop constraint transactions_gateway_order_id_key`.execute(db);
        await sql`alter table notifications drop constraint notifications_dedupe_key_key`.execute(db);
        await sql`alter table idempotency_records drop constraint idempotency_pk`.execute(db);
        await sql`alter table idempotency_records add constraint idempotency_pk primary key (account, scope, idem_key)`.execute(
          db,
        );
      }
      await sql`create unique index transactions_account_order_idx on transactions (account, order_id)`.execute(db);
      await sql`create unique index transactions_account_gateway_order_idx on transactions (account, gateway_order_id)`.execute(
        db,
      );
      await sql`create unique index notifications_account_dedupe_idx on notifications (account, dedupe_key)`.execute(
        db,
      );
      await sql`create unique index runtime_config_account_idx on runtime_config (account)`.execute(db);
      await db.schema.dropIndex('reconciliation_file_idx').execute();
      await sql`create unique index reconciliation_file_idx on reconciliation_imports (account, file_sha256) where state = 'done'`.execute(
        db,
      );
      await db.schema
        .createIndex('transactions_account_created_idx')
        .on('transactions')
        .columns(['account', 'created_at', 'id'])
        .execute();
      await db.schema
        .createIndex('outbox_account_feed_idx')
        .on('outbox_events')
        .columns(['account', 'feed_seq'])
        .execute();
    },
  };
}

/**
 * Operators who sign in by name, each with a role, and their console sessions (kept by the hash of
 * the cookie's random id, so a copy of the table cannot be replayed as a cookie).
 */
export const operatorsMigration028: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('operators')
      .addColumn('username', 'text', (c) => c.primaryKey())
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('accounts', 'text')
      .addColumn('password_hash', 'text', (c) => c.notNull())
      .addColumn('disabled_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('last_sign_in_at', 'text')
      .execute();
    await db.schema
      .createTable('operator_sessions')
      .addColumn('id_hash', 'text', (c) => c.primaryKey())
      .addColumn('username', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('last_seen_at', 'text', (c) => c.notNull())
      .addColumn('ended_at', 'text')
      .execute();
    await db.schema
      .createIndex('operator_sessions_user_idx')
      .on('operator_sessions')
      .columns(['username', 'ended_at'])
      .execute();
  },
};

/**
 * The outbox's claim per account walks that account's claimable events in due order (a lane per
 * account: another account's backlog is never read to fill it).
 */
export const outboxAccountLanesMigration032: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`create index outbox_account_claimable_idx on outbox_events (account, next_attempt_at, seq) where state in ('pending', 'failed')`.execute(
      db,
    );
  },
};

/**
 * An ERP event keeps the W3C trace context (`traceparent`) of the work that wrote it, so each of its
 * delivery attempts, however much later, joins that trace. Null when tracing was off.
 */
export const traceContextMigration030: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('outbox_events').addColumn('trace_context', 'text').execute();
  },
};

/** A purchase on a link used more than once names its link, so a link's purchases are listed by it. */
export const linkPurchasesMigration036: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('transactions').addColumn('payment_link_order_id', 'text').execute();
    await db.schema
      .createIndex('transactions_link_purchases_idx')
      .on('transactions')
      .columns(['account', 'payment_link_order_id', 'created_at'])
      .execute();
  },
};

/** An import counts the report's chargebacks apart from its refunds and mismatches. */
export const reconciliationChargebacksMigration037: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('reconciliation_imports')
      .addColumn('chargeback', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  },
};

/**
 * Lanes: the outbox carries ERP events (`erp`) and alert notifications (`alert`), and each
 * account's claim of a lane walks that lane's claimable events in due order (another account's or
 * lane's backlog is never read to fill it). Alerts: one row per alert raised, at most one open
 * (not resolved) per account, alert and subject, on every instance (a unique index).
 */
export function outboxAlertLaneMigration033(kind: Kind): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await sql`alter table outbox_events add column lane text not null default 'erp'`.execute(db);
      await db.schema.dropIndex('outbox_account_claimable_idx').execute();
      await sql`create index outbox_lane_claimable_idx on outbox_events (account, lane, next_attempt_at, seq) where state in ('pending', 'failed')`.execute(
        db,
      );
      await sql`create table alerts (
        ${dialect(kind).autoId('id')},
        account text not null,
        alert text not null,
        subject text not null,
        summary text not null,
        details text not null,
        started_at text not null,
        resolved_at text
      )`.execute(db);
      await sql`create unique index alerts_open_idx on alerts (account, alert, subject) where resolved_at is null`.execute(
        db,
      );
      await sql`create index alerts_started_idx on alerts (started_at)`.execute(db);
    },
  };
}

/** Each account's oldest undelivered event in two seeks (the per-account age gauge). */
export const outboxAccountOldestMigration038: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createIndex('outbox_account_state_seq_idx')
      .on('outbox_events')
      .columns(['account', 'state', 'seq'])
      .execute();
  },
};

/** An import says where its rows came from: an uploaded file, or the gateway's transaction-history API. */
export const reconciliationSourceMigration040: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('reconciliation_imports')
      .addColumn('source', 'text', (c) => c.notNull().defaultTo('file'))
      .execute();
  },
};

/** Which gateway API created each payment; every payment made before is the legacy API's. */
export const transactionCarrierMigration039: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('transactions')
      .addColumn('carrier', 'text', (c) => c.notNull().defaultTo('legacy'))
      .execute();
  },
};

/** The outbox tables' autovacuum rule (PostgreSQL storage parameters; see migration 041). */
const OUTBOX_AUTOVACUUM = `autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000,
  autovacuum_vacuum_cost_delay = 0, autovacuum_analyze_scale_factor = 0.02`;

/**
 * PostgreSQL: autovacuum visits `outbox_events` once 1,000 row versions are dead, whatever the
 * table's size, unthrottled, and analyzes it after 2 % of its rows changed. Every event leaves two
 * dead versions (the claim and the result); by the default rule (a fifth of the live rows plus
 * 50) a table that keeps its delivered history waits long: with 360,000 rows at 200 events/s,
 * one vacuum in 300 s and up to 77,000 dead versions, against five and at most 29,000 with this
 * rule, 0.14–0.42 s a vacuum (docs/performance.md, "PostgreSQL housekeeping"). Dead versions
 * under the next-due walk make it slow while delivery lags behind. How often autovacuum comes at
 * most is still the server's `autovacuum_naptime`, and `autovacuum` must be on: nothing here
 * turns it on.
 *
 * No fillfactor: it only pays for HOT updates. The result sets `state`, `next_attempt_at` and
 * `delivered_at`, which indexes hold, so it is never one. The claim sets only unindexed columns
 * since migration 042 dropped `outbox_leased_idx`, and is HOT wherever its page has room: about a
 * third of all updates in a drain at the default fillfactor, against none before. A fillfactor of
 * 80 made about half of them HOT, but the server's CPU per delivered event did not move (5 pairs
 * of a 4,000-event drain, within ±10 % either way). The same goes for `transactions`: a report's
 * write changes `status` (two indexes) and `gateway_transaction_id` (one).
 *
 * SQLite: nothing (no autovacuum of this kind).
 */
export function outboxAutovacuumMigration041(kind: Kind): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (kind !== 'postgres') return;
      await sql`alter table outbox_events set (${sql.raw(OUTBOX_AUTOVACUUM)})`.execute(db);
    },
  };
}

/**
 * Per-order lanes: one row for each order (of an account and outbox lane) with an undelivered
 * event, naming its first one (the head: the only event of the order a claim may take) and when
 * the head can next be claimed: its due time, or its lease's end while a lease holds it past that,
 * or null while it is dead (a dead event holds its order). A claim takes the first heads of its
 * lane in that order and never visits an event waiting behind its order, nor one in flight; the
 * next due time is the lanes' first. With a down ERP's backlog of 100,000 orders, each with an event
 * behind a failed one, the walk over the events themselves visited all of them on every poll
 * (docs/performance.md, "The per-order lane table").
 *
 * Triggers keep the table, so every writer of `outbox_events` (the repositories, each database's
 * report writes, the feed's acknowledgement, retention, a restore, a bench's seed) keeps it exact
 * without knowing of it. An insert makes its event the head when it is the order's first undelivered
 * one. A change that keeps an event undelivered (a lease, a failure's retry time, dead) moves only
 * the time of the lane whose head it is. Delivering an event, opening a delivered one again, and
 * removing an undelivered one read the order's head again (`outbox_order_idx`: the order's few
 * events).
 *
 * PostgreSQL: the order's lane row is the lock that orders these writes. An insert takes it with
 * its upsert, keeping the earlier head. A change that may move the head removes the row first
 * (waiting for a writer that holds it, whose commit its removal then sees), reads the head with a
 * fresh snapshot, and writes the row again with the same upsert: an inserter that came after waits
 * for the removal's commit, and one that came before without a row to wait on has left a row the
 * upsert keeps the earlier head of. So no event is left without its order's lane. A change of time
 * locks the row before it updates it, so it sees a head that a concurrent delivery moved onto its
 * event. Every writer locks an order's event row before its lane row (a claim locks the events it
 * takes, skipping those held).
 *
 * The claim's partial indexes on `outbox_events` go, and so does `outbox_leased_idx` (only the
 * next-due query read it): the lanes' own indexes replace them, and an insert, a claim and a result
 * no longer maintain them.
 */
export function outboxLanesMigration042(kind: Kind): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await sql`create table outbox_lanes (
        account text not null,
        lane text not null,
        order_key text not null,
        head_seq ${sql.raw(dialect(kind).big)} not null,
        due_at text,
        primary key (account, lane, order_key)
      )${sql.raw(kind === 'sqlite' ? ' without rowid' : '')}`.execute(db);
      await sql`insert into outbox_lanes (account, lane, order_key, head_seq, due_at)
        select e.account, e.lane, e.order_key, e.seq, ${sql.raw(laneDue('e'))}
        from outbox_events e
        where e.state in ${sql.raw(UNDELIVERED_STATES)} and e.seq = (
          select min(p.seq) from outbox_events p where p.order_key = e.order_key and p.account = e.account
            and p.lane = e.lane and p.state in ${sql.raw(UNDELIVERED_STATES)}
        )`.execute(db);
      await sql`create index outbox_lanes_due_idx on outbox_lanes (due_at, head_seq) where due_at is not null`.execute(
        db,
      );
      await sql`create index outbox_lanes_account_due_idx on outbox_lanes (account, lane, due_at, head_seq) where due_at is not null`.execute(
        db,
      );
      for (const statement of kind === 'postgres' ? POSTGRES_LANE_TRIGGERS : SQLITE_LANE_TRIGGERS)
        await sql.raw(statement).execute(db);
      // Each event's claim and result leave a dead lane row version: the same autovacuum rule as
      // `outbox_events` (migration 041), for the same reason.
      if (kind === 'postgres') await sql`alter table outbox_lanes set (${sql.raw(OUTBOX_AUTOVACUUM)})`.execute(db);
      await db.schema.dropIndex('outbox_claimable_idx').execute();
      await db.schema.dropIndex('outbox_lane_claimable_idx').execute();
      await db.schema.dropIndex('outbox_leased_idx').execute();
    },
  };
}

/** The states of an undelivered event: each order's first one in these is its head. */
const UNDELIVERED_STATES = `('pending', 'failed', 'dead')`;

/** When an undelivered event `e` can next be claimed: null while dead, else its due time or its lease's end, the later. */
function laneDue(e: string): string {
  return `case when ${e}.state = 'dead' then null
    when ${e}.lease_until is not null and ${e}.lease_until > ${e}.next_attempt_at then ${e}.lease_until
    else ${e}.next_attempt_at end`;
}

/**
 * A change that keeps the event undelivered but may move when it can be claimed (its state among
 * the undelivered ones, its due time, its lease). The head stays: the set of undelivered events of
 * the order is the same. Only the head's own time moves, so an event waiting behind its order
 * (thousands when an endpoint's backlog is made due at once) costs a lookup that finds nothing.
 */
const STAYS_UNDELIVERED = `old.state in ${UNDELIVERED_STATES} and new.state in ${UNDELIVERED_STATES} and (
  old.state is distinct from new.state or old.next_attempt_at is distinct from new.next_attempt_at
  or old.lease_until is distinct from new.lease_until)`;

/** A change that delivers an undelivered event or opens a delivered one again: the head may move. */
const JOINS_OR_LEAVES = `(old.state in ${UNDELIVERED_STATES}) <> (new.state in ${UNDELIVERED_STATES})`;

/** Makes the undelivered event `e` its order's head unless the lane already names an earlier one. */
const UPSERT_LANE = (e: string) => `insert into outbox_lanes as l (account, lane, order_key, head_seq, due_at)
  values (${e}.account, ${e}.lane, ${e}.order_key, ${e}.seq, ${laneDue(e)})
  on conflict (account, lane, order_key) do update set head_seq = excluded.head_seq, due_at = excluded.due_at
  where excluded.head_seq < l.head_seq;`;

/** The lane of the order of `e`, in a WHERE clause. */
const LANE_OF = (e: string) => `account = ${e}.account and lane = ${e}.lane and order_key = ${e}.order_key`;

/** The rest of a select of the head of the order of `e` (on `outbox_order_idx`: the order's few events). */
const HEAD_OF = (e: 'new' | 'old') => `from outbox_events
  where order_key = ${e}.order_key and account = ${e}.account and lane = ${e}.lane and state in ${UNDELIVERED_STATES}
  order by seq limit 1`;

/** SQLite: one connection writes, so a trigger's statements see every earlier write and race none. */
const SQLITE_LANE_TRIGGERS = (() => {
  const reread = (e: 'old' | 'new') => `
    delete from outbox_lanes where ${LANE_OF(e)};
    insert into outbox_lanes (account, lane, order_key, head_seq, due_at)
      select account, lane, order_key, seq, ${laneDue('outbox_events')} ${HEAD_OF(e)};`;
  return [
    `create trigger outbox_lanes_on_insert after insert on outbox_events
      when new.state in ${UNDELIVERED_STATES}
      begin
        ${UPSERT_LANE('new')}
      end`,
    `create trigger outbox_lanes_on_update after update of state on outbox_events
      when ${JOINS_OR_LEAVES}
      begin ${reread('new')} end`,
    `create trigger outbox_lanes_on_time after update of state, next_attempt_at, lease_until on outbox_events
      when ${STAYS_UNDELIVERED}
      begin
        update outbox_lanes set due_at = ${laneDue('new')} where ${LANE_OF('new')} and head_seq = new.seq;
      end`,
    `create trigger outbox_lanes_on_delete after delete on outbox_events
      when old.state in ${UNDELIVERED_STATES}
      begin ${reread('old')} end`,
  ];
})();

/** PostgreSQL: removes the lane of the order of `e` (waiting for its holder), then reads its head into `h`. */
const READ_HEAD_AGAIN = (e: 'new' | 'old') => `delete from outbox_lanes where ${LANE_OF(e)};
  select seq, account, lane, order_key, state, next_attempt_at, lease_until into h ${HEAD_OF(e)};`;

/** PostgreSQL: the lane row is locked before the head is read again (see the migration's comment). */
const POSTGRES_LANE_TRIGGERS = [
  // The rows are read by field (never copied whole into a variable: an event carries its payload).
  `create function outbox_lane_sync() returns trigger language plpgsql as $body$
  declare
    h record;
  begin
    if tg_op = 'INSERT' then
      ${UPSERT_LANE('new')}
      return null;
    end if;
    if tg_op = 'UPDATE' then
      if ${STAYS_UNDELIVERED} then
        -- The lock waits for a writer moving this order's head, so the update's fresh snapshot
        -- sees whether this event is the head now.
        perform 1 from outbox_lanes where ${LANE_OF('new')} for update;
        update outbox_lanes set due_at = ${laneDue('new')} where ${LANE_OF('new')} and head_seq = new.seq;
        return null;
      end if;
      ${READ_HEAD_AGAIN('new')}
    else
      ${READ_HEAD_AGAIN('old')}
    end if;
    if found then
      ${UPSERT_LANE('h')}
    end if;
    return null;
  end
  $body$`,
  `create trigger outbox_lanes_on_insert after insert on outbox_events for each row
    when (new.state in ${UNDELIVERED_STATES}) execute function outbox_lane_sync()`,
  `create trigger outbox_lanes_on_update after update of state, next_attempt_at, lease_until on outbox_events for each row
    when ((${STAYS_UNDELIVERED}) or ${JOINS_OR_LEAVES}) execute function outbox_lane_sync()`,
  `create trigger outbox_lanes_on_delete after delete on outbox_events for each row
    when (old.state in ${UNDELIVERED_STATES}) execute function outbox_lane_sync()`,
];

export function migrationProvider(kind: Kind): MigrationProvider {
  return { getMigrations: async () => migrations(kind) };
}
