import { orNone } from './console-queries.js';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, TransactionsTable } from '../schema.js';
import { UniqueViolationError, type TransactionFilter, type TransactionsRepo } from '../../contract.js';
import { isUniqueViolation } from '../errors.js';
import type { NewTransaction, TransactionPatch, TransactionRecord } from '../../../model/payment.js';
import type { Page } from '../../../model/page.js';
import type { SqlDialect } from '../dialect.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import {
  selectTransactionBy,
  toTransaction,
  updateTransaction,
  type TransactionUpdateOptions,
} from '../rows/transactions.js';
import { Precompiled } from '../precompiled.js';

/** Every column of a new row, in the order the insert names them. */
const INSERT_COLUMNS = [
  'id',
  'account',
  'order_id',
  'gateway_order_id',
  'mercant_id',
  'kind',
  'attempt',
  'nominal',
  'status',
  'transaction_status',
  'fraud_status',
  'payment_type',
  'gateway_transaction_id',
  'payment_url',
  'payment_link_id',
  'snap_token',
  'request_hash',
  'request_json',
  'gateway_json',
  'expire_at',
  'settlement_time',
  'transaction_time',
  'status_version',
  'flags',
  'last_event_at',
  'created_at',
  'updated_at',
  'checked_at',
  'refunded_amount',
  'paid_amount',
  'original_amount',
  'fee_amount',
  'net_amount',
  'payment_link_order_id',
  'carrier',
] as const satisfies readonly (keyof TransactionsTable)[];
/** A column of the table the insert does not name fails the build here (it would be left to its default). */
const EVERY_COLUMN_INSERTED: Exclude<keyof TransactionsTable, (typeof INSERT_COLUMNS)[number]> extends never
  ? true
  : never = true;
void EVERY_COLUMN_INSERTED;

/**
 * A creation's insert as one text: Kysely's builder compiles its 35 columns on every call, about
 * 6 % of a link creation's sampled time in `scripts/hot-path-cpu.ts --profile`; with the
 * conditional update below, 650 → 430 µs CPU of a link's store work on SQLite (docs/performance.md).
 */
const INSERT = new Precompiled<never>(
  `insert into transactions (${INSERT_COLUMNS.join(', ')}) values (${INSERT_COLUMNS.map(() => '?').join(', ')})`,
);

export class KyselyTransactionsRepo implements TransactionsRepo {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => Date,
    private readonly dialect: SqlDialect,
    private readonly account: string,
  ) {}

  async insert(t: NewTransaction): Promise<TransactionRecord> {
    const at = this.now().toISOString();
    const row: Selectable<TransactionsTable> = {
      id: t.id,
      account: this.account,
      order_id: t.orderId,
      gateway_order_id: t.gatewayOrderId,
      mercant_id: t.mercantId,
      kind: t.kind,
      attempt: t.attempt,
      nominal: t.nominal,
      status: t.status,
      transaction_status: t.transactionStatus ?? null,
      fraud_status: t.fraudStatus ?? null,
      payment_type: t.paymentType ?? null,
      gateway_transaction_id: t.gatewayTransactionId ?? null,
      payment_url: t.paymentUrl,
      payment_link_id: t.paymentLinkId,
      snap_token: t.snapToken,
      request_hash: t.requestHash,
      request_json: t.requestJson,
      gateway_json: t.gatewayJson,
      expire_at: t.expireAt,
      settlement_time: t.settlementTime ?? null,
      transaction_time: t.transactionTime ?? null,
      status_version: t.statusVersion ?? 0,
      flags: t.flags ?? null,
      last_event_at: null,
      created_at: at,
      updated_at: at,
      checked_at: null,
      refunded_amount: 0,
      paid_amount: null,
      original_amount: null,
      fee_amount: null,
      net_amount: null,
      payment_link_order_id: t.paymentLinkOrderId ?? null,
      carrier: t.carrier ?? 'legacy',
    };
    try {
      await INSERT.run(
        this.db,
        this.dialect.kind,
        INSERT_COLUMNS.map((c) => row[c] ?? null),
      );
    } catch (err) {
      if (isUniqueViolation(err)) throw new UniqueViolationError(`transaction ${t.orderId} exists`);
      throw err;
    }
    return toTransaction(row);
  }

  private findBy(
    col: 'id' | 'order_id' | 'gateway_order_id',
    value: string,
    lock = false,
  ): Promise<TransactionRecord | undefined> {
    // Our own ids are unique across accounts; the order ids only within one.
    const account = col === 'id' ? undefined : this.account;
    return selectTransactionBy(this.db, this.dialect.kind, col, value, lock ? this.dialect.rowLock : '', account);
  }

  findById(id: string) {
    return this.findBy('id', id);
  }
  findForUpdate(key: { id: string } | { gatewayOrderId: string }) {
    return 'id' in key ? this.findBy('id', key.id, true) : this.findBy('gateway_order_id', key.gatewayOrderId, true);
  }
  findByOrderId(orderId: string) {
    return this.findBy('order_id', orderId);
  }
  findByGatewayOrderId(gatewayOrderId: string) {
    return this.findBy('gateway_order_id', gatewayOrderId);
  }
  async findByGatewayTransactionId(transactionId: string): Promise<TransactionRecord | undefined> {
    const row = await this.db
      .selectFrom('transactions')
      .selectAll()
      .where('gateway_transaction_id', '=', transactionId)
      .where('account', '=', this.account)
      .orderBy('created_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row ? toTransaction(row) : undefined;
  }

  async listMoneyMovedBetween(
    from: string,
    to: string,
    afterId: string,
    limit: number,
    accounts?: readonly string[],
  ): Promise<TransactionRecord[]> {
    const paidAt = sql<string>`coalesce(settlement_time, transaction_time)`;
    let q = this.db.selectFrom('transactions').selectAll();
    if (accounts !== undefined) q = q.where('account', 'in', orNone(accounts));
    const rows = await q
      .where('status', 'in', ['paid', 'partially_refunded', 'refunded', 'chargeback'])
      .where(paidAt, '>=', from)
      .where(paidAt, '<=', to)
      .where('id', '>', afterId)
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map(toTransaction);
  }

  async findManyByGatewayOrderIds(gatewayOrderIds: readonly string[]): Promise<TransactionRecord[]> {
    if (gatewayOrderIds.length === 0) return [];
    if (gatewayOrderIds.length > 1000) throw new Error('findManyByGatewayOrderIds: at most 1000 ids a call');
    const rows = await this.db
      .selectFrom('transactions')
      .selectAll()
      .where('gateway_order_id', 'in', [...gatewayOrderIds])
      .where('account', '=', this.account)
      .execute();
    return rows.map(toTransaction);
  }

  async latestForMercant(mercantId: string): Promise<TransactionRecord | undefined> {
    const row = await this.db
      .selectFrom('transactions')
      .selectAll()
      .where('mercant_id', '=', mercantId)
      .where('account', '=', this.account)
      .orderBy('attempt', 'desc')
      .orderBy('created_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row ? toTransaction(row) : undefined;
  }

  async listLinkPurchases(linkOrderId: string, limit: number): Promise<TransactionRecord[]> {
    const rows = await this.db
      .selectFrom('transactions')
      .selectAll()
      .where('account', '=', this.account)
      .where('payment_link_order_id', '=', linkOrderId)
      .orderBy('created_at')
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map(toTransaction);
  }

  update(id: string, patch: TransactionPatch, o: TransactionUpdateOptions = {}): Promise<TransactionRecord> {
    return updateTransaction(this.db, this.dialect.kind, this.now, id, patch, o);
  }

  async list(filter: TransactionFilter): Promise<Page<TransactionRecord>> {
    const limit = Math.min(Math.max(filter.limit ?? 100, 1), 1000);
    let q = this.db.selectFrom('transactions').selectAll();
    if (filter.account) q = q.where('account', '=', filter.account);
    if (filter.accounts) q = q.where('account', 'in', orNone(filter.accounts));
    if (filter.status) q = q.where('status', '=', filter.status);
    if (filter.mercantId) q = q.where('mercant_id', '=', filter.mercantId);
    if (filter.since) q = q.where('created_at', '>=', filter.since);
    const cursor = filter.cursor ? decodeCursor(filter.cursor) : undefined;
    if (cursor) {
      q = q.where((eb) =>
        eb.or([eb('created_at', '<', cursor.at), eb.and([eb('created_at', '=', cursor.at), eb('id', '<', cursor.id)])]),
      );
    }
    const rows = await q
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit + 1)
      .execute();
    const items = rows.slice(0, limit).map(toTransaction);
    const last = items[items.length - 1];
    return rows.length > limit && last
      ? { items, nextCursor: encodeCursor({ at: last.createdAt, id: last.id }) }
      : { items };
  }

  async listOverduePending(expiredBefore: string, createdBefore: string, limit: number): Promise<TransactionRecord[]> {
    const rows = await this.db
      .selectFrom('transactions')
      .selectAll()
      .where('status', 'in', ['pending', 'challenge'])
      .where((eb) =>
        eb.or([
          eb.and([eb('expire_at', 'is not', null), eb('expire_at', '<', expiredBefore)]),
          eb.and([
            eb('created_at', '<', createdBefore),
            eb.or([eb('last_event_at', 'is', null), eb('last_event_at', '<', createdBefore)]),
          ]),
        ]),
      )
      // Never checked first (empty text sorts before any time on both databases), then round-robin.
      .orderBy(sql`coalesce(checked_at, '')`, 'asc')
      .orderBy('updated_at', 'asc')
      .limit(limit)
      .execute();
    return rows.map(toTransaction);
  }

  async countPendingPastExpiry(expiredBefore: string): Promise<number> {
    const row = await this.db
      .selectFrom('transactions')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', 'in', ['pending', 'challenge'])
      .where('expire_at', 'is not', null)
      .where('expire_at', '<', expiredBefore)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  async markChecked(id: string, at: string): Promise<void> {
    await this.db.updateTable('transactions').set({ checked_at: at }).where('id', '=', id).execute();
  }
}
