import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, TransactionsTable } from '../schema.js';
import { UniqueViolationError, isUniqueViolation, type TransactionFilter, type TransactionsRepo } from '../../contract.js';
import { PAYMENT_STATUSES, TRANSACTION_KINDS, type NewTransaction, type TransactionPatch, type TransactionRecord } from '../../../model/payment.js';
import type { Page } from '../../../model/page.js';
import type { SqlDialect } from '../dialect.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import { oneOf } from './literal.js';

type Row = Selectable<TransactionsTable>;

export function toRecord(r: Row): TransactionRecord {
  return {
    id: r.id,
    orderId: r.order_id,
    gatewayOrderId: r.gateway_order_id,
    mercantId: r.mercant_id,
    kind: oneOf(TRANSACTION_KINDS, r.kind, 'transactions.kind'),
    attempt: Number(r.attempt),
    nominal: Number(r.nominal),
    status: oneOf(PAYMENT_STATUSES, r.status, 'transactions.status'),
    transactionStatus: r.transaction_status,
    fraudStatus: r.fraud_status,
    paymentType: r.payment_type,
    gatewayTransactionId: r.gateway_transaction_id,
    paymentUrl: r.payment_url,
    paymentLinkId: r.payment_link_id,
    snapToken: r.snap_token,
    requestHash: r.request_hash,
    requestJson: r.request_json,
    gatewayJson: r.gateway_json,
    expireAt: r.expire_at,
    settlementTime: r.settlement_time,
    transactionTime: r.transaction_time,
    statusVersion: Number(r.status_version),
    refundedAmount: Number(r.refunded_amount ?? 0),
    paidAmount: r.paid_amount === null ? null : Number(r.paid_amount),
    originalAmount: r.original_amount === null ? null : Number(r.original_amount),
    feeAmount: r.fee_amount === null ? null : Number(r.fee_amount),
    netAmount: r.net_amount === null ? null : Number(r.net_amount),
    flags: r.flags,
    lastEventAt: r.last_event_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

const COLUMNS: Record<keyof TransactionPatch, keyof TransactionsTable> = {
  mercantId: 'mercant_id',
  kind: 'kind',
  attempt: 'attempt',
  nominal: 'nominal',
  status: 'status',
  transactionStatus: 'transaction_status',
  fraudStatus: 'fraud_status',
  paymentType: 'payment_type',
  gatewayTransactionId: 'gateway_transaction_id',
  paymentUrl: 'payment_url',
  paymentLinkId: 'payment_link_id',
  snapToken: 'snap_token',
  requestHash: 'request_hash',
  requestJson: 'request_json',
  gatewayJson: 'gateway_json',
  expireAt: 'expire_at',
  settlementTime: 'settlement_time',
  transactionTime: 'transaction_time',
  statusVersion: 'status_version',
  refundedAmount: 'refunded_amount',
  paidAmount: 'paid_amount',
  originalAmount: 'original_amount',
  feeAmount: 'fee_amount',
  netAmount: 'net_amount',
  flags: 'flags',
  lastEventAt: 'last_event_at',
};

export function toColumns(patch: TransactionPatch): Partial<TransactionsTable> {
  const out: Partial<Record<keyof TransactionsTable, unknown>> = {};
  for (const [k, v] of Object.entries(patch)) {
    const col = COLUMNS[k as keyof TransactionPatch];
    if (col !== undefined && v !== undefined) out[col] = v;
  }
  return out as Partial<TransactionsTable>;
}

type UpdateOptions = Parameters<TransactionsRepo['update']>[2] & object;

export class KyselyTransactionsRepo implements TransactionsRepo {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => Date,
    private readonly dialect: SqlDialect,
  ) {}

  async insert(t: NewTransaction): Promise<TransactionRecord> {
    const at = this.now().toISOString();
    const row: Selectable<TransactionsTable> = {
      id: t.id,
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
    };
    try {
      await this.db.insertInto('transactions').values(row).execute();
    } catch (err) {
      if (isUniqueViolation(err)) throw new UniqueViolationError(`transaction ${t.orderId} exists`);
      throw err;
    }
    return toRecord(row);
  }

  /** By a unique column: no ordering (on SQLite an `order by … limit` here costs 2.5× the lookup). */
  private async findBy(col: 'id' | 'order_id' | 'gateway_order_id', value: string, lock = false): Promise<TransactionRecord | undefined> {
    const row = await sql<Row>`select * from transactions where ${sql.ref(col)} = ${value} ${lock ? this.dialect.rowLock : sql``}`.execute(this.db);
    const first = row.rows[0];
    return first ? toRecord(first) : undefined;
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
    const row = await this.db.selectFrom('transactions').selectAll().where('gateway_transaction_id', '=', transactionId).orderBy('created_at', 'desc').limit(1).executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  async listMoneyMovedBetween(from: string, to: string, afterId: string, limit: number): Promise<TransactionRecord[]> {
    const paidAt = sql<string>`coalesce(settlement_time, transaction_time)`;
    const rows = await this.db
      .selectFrom('transactions')
      .selectAll()
      .where('status', 'in', ['paid', 'partially_refunded', 'refunded', 'chargeback'])
      .where(paidAt, '>=', from)
      .where(paidAt, '<=', to)
      .where('id', '>', afterId)
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map(toRecord);
  }

  async findManyByGatewayOrderIds(gatewayOrderIds: readonly string[]): Promise<TransactionRecord[]> {
    if (gatewayOrderIds.length === 0) return [];
    if (gatewayOrderIds.length > 1000) throw new Error('findManyByGatewayOrderIds: at most 1000 ids a call');
    const rows = await this.db.selectFrom('transactions').selectAll().where('gateway_order_id', 'in', [...gatewayOrderIds]).execute();
    return rows.map(toRecord);
  }

  async latestForMercant(mercantId: string): Promise<TransactionRecord | undefined> {
    const row = await this.db
      .selectFrom('transactions')
      .selectAll()
      .where('mercant_id', '=', mercantId)
      .orderBy('attempt', 'desc')
      .orderBy('created_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  async update(id: string, patch: TransactionPatch, o: UpdateOptions = {}): Promise<TransactionRecord> {
    const always: Record<string, unknown> = toColumns(patch);
    const values: Record<string, unknown> = { ...always, updated_at: this.now().toISOString() };
    if (o.whileStatusIn) {
      // Every expression of an UPDATE reads the row as it was, so each column tests the old status.
      const when = sql.join(o.whileStatusIn.statuses.length > 0 ? [...o.whileStatusIn.statuses] : ['-none-']);
      for (const [col, v] of Object.entries(toColumns(o.whileStatusIn.patch))) {
        const otherwise = col in always ? sql`${always[col]}` : sql.ref(col);
        values[col] = sql`case when ${sql.ref('status')} in (${when}) then ${v} else ${otherwise} end`;
      }
    }
    let q = this.db.updateTable('transactions').set(values).where('id', '=', id);
    if (o.ifStatusIn) q = q.where('status', 'in', o.ifStatusIn.length > 0 ? [...o.ifStatusIn] : ['-none-']);
    // The changed row comes back with the update (one statement); an update whose condition did not
    // hold changes nothing and the row is read as it stands.
    const changed = await q.returningAll().executeTakeFirst();
    const after = changed ? toRecord(changed) : await this.findById(id);
    if (!after) throw new Error(`transaction ${id} vanished during update`);
    return after;
  }

  async list(filter: TransactionFilter): Promise<Page<TransactionRecord>> {
    const limit = Math.min(Math.max(filter.limit ?? 100, 1), 1000);
    let q = this.db.selectFrom('transactions').selectAll();
    if (filter.status) q = q.where('status', '=', filter.status);
    if (filter.mercantId) q = q.where('mercant_id', '=', filter.mercantId);
    if (filter.since) q = q.where('created_at', '>=', filter.since);
    const cursor = filter.cursor ? decodeCursor(filter.cursor) : undefined;
    if (cursor) {
      q = q.where((eb) => eb.or([eb('created_at', '<', cursor.at), eb.and([eb('created_at', '=', cursor.at), eb('id', '<', cursor.id)])]));
    }
    const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit + 1).execute();
    const items = rows.slice(0, limit).map(toRecord);
    const last = items[items.length - 1];
    return rows.length > limit && last ? { items, nextCursor: encodeCursor({ at: last.createdAt, id: last.id }) } : { items };
  }

  async listOverduePending(expiredBefore: string, createdBefore: string, limit: number): Promise<TransactionRecord[]> {
    const rows = await this.db
      .selectFrom('transactions')
      .selectAll()
      .where('status', 'in', ['pending', 'challenge'])
      .where((eb) =>
        eb.or([
          eb.and([eb('expire_at', 'is not', null), eb('expire_at', '<', expiredBefore)]),
          eb.and([eb('created_at', '<', createdBefore), eb.or([eb('last_event_at', 'is', null), eb('last_event_at', '<', createdBefore)])]),
        ]),
      )
      // Never checked first (empty text sorts before any time on both databases), then round-robin.
      .orderBy(sql`coalesce(checked_at, '')`, 'asc')
      .orderBy('updated_at', 'asc')
      .limit(limit)
      .execute();
    return rows.map(toRecord);
  }

  async markChecked(id: string, at: string): Promise<void> {
    await this.db.updateTable('transactions').set({ checked_at: at }).where('id', '=', id).execute();
  }
}
