/**
 * A transaction's row and its record, and the statements on it that both the repository and a
 * database's own report writes (`sqlite/report-writes.ts`) run.
 */
import type { Kysely, Selectable } from 'kysely';
import type { Database, TransactionsTable } from '../schema.js';
import type { TransactionsRepo } from '../../contract.js';
import {
  CARRIERS,
  PAYMENT_STATUSES,
  TRANSACTION_KINDS,
  type TransactionPatch,
  type TransactionRecord,
} from '../../../model/payment.js';
import { oneOf } from './literal.js';
import { PrecompiledFamily, type DatabaseKind } from '../precompiled.js';

export type TransactionRow = Selectable<TransactionsTable>;

export function toTransaction(r: TransactionRow): TransactionRecord {
  return {
    id: r.id,
    account: r.account,
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
    paymentLinkOrderId: r.payment_link_order_id,
    carrier: oneOf(CARRIERS, r.carrier, 'transactions.carrier'),
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
  carrier: 'carrier',
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

export type TransactionUpdateOptions = Parameters<TransactionsRepo['update']>[2] & object;

const SELECT_BY = new PrecompiledFamily<TransactionRow>((key) => {
  const [col, scoped, ...lock] = key.split(' ');
  return `select * from transactions where ${col} = ?${scoped === 'account' ? ' and account = ?' : ''} ${lock.join(' ')}`;
});

/**
 * By a unique column (the order ids within `account`; the id across accounts), with `lock` (the
 * dialect's row lock clause) after it for a lookup that locks. No
 * ordering: on SQLite an `order by … limit` here costs 2.5× the lookup (docs/performance.md).
 */
export async function selectTransactionBy(
  db: Kysely<Database>,
  kind: DatabaseKind,
  col: 'id' | 'order_id' | 'gateway_order_id',
  value: string,
  lock = '',
  account?: string,
): Promise<TransactionRecord | undefined> {
  const key = `${col} ${account === undefined ? 'any' : 'account'} ${lock}`;
  const first = await SELECT_BY.get(key).first(db, kind, account === undefined ? [value] : [value, account]);
  return first ? toTransaction(first) : undefined;
}

/** A plain patch: the columns it sets, then `updated_at`, by id, the row as it is afterwards. */
const UPDATE = new PrecompiledFamily<TransactionRow>(
  (columns) =>
    `update transactions set ${columns
      .split(' ')
      .map((c) => `${c} = ?`)
      .join(', ')}, updated_at = ? where id = ? returning *`,
);

/** `TransactionsRepo.update`: the patch, and the record as it is afterwards. */
/** `?, ?, …`: n placeholders, at least one (an empty list matches nothing through `'-none-'`). */
const placeholders = (n: number) => Array.from({ length: Math.max(1, n) }, () => '?').join(', ');

/**
 * A conditional update (`ifStatusIn`, `whileStatusIn`) as one text per shape: the columns set always,
 * those set only while the status is one of N, and the N statuses of the guard. Key:
 * `always columns | while columns | N while statuses | N if statuses (or -)`.
 */
const CONDITIONAL_UPDATE = new PrecompiledFamily<TransactionRow>((key) => {
  const [alwaysPart = '', whilePart = '', whileCount = '0', ifCount = '-'] = key.split('|');
  const always = alwaysPart.split(' ').filter(Boolean);
  const guarded = whilePart.split(' ').filter(Boolean);
  // Every expression of an UPDATE reads the row as it was, so each column tests the old status.
  const when = `status in (${placeholders(Number(whileCount))})`;
  const sets = [
    ...always.map((c) => (guarded.includes(c) ? `${c} = case when ${when} then ? else ? end` : `${c} = ?`)),
    'updated_at = ?',
    ...guarded.filter((c) => !always.includes(c)).map((c) => `${c} = case when ${when} then ? else ${c} end`),
  ];
  const guard = ifCount === '-' ? '' : ` and status in (${placeholders(Number(ifCount))})`;
  return `update transactions set ${sets.join(', ')} where id = ?${guard} returning *`;
});

/** A status list as parameters: an empty one stands for a value no status has. */
const statusParams = (statuses: readonly string[]) => (statuses.length > 0 ? statuses : ['-none-']);

export async function updateTransaction(
  db: Kysely<Database>,
  kind: DatabaseKind,
  now: () => Date,
  id: string,
  patch: TransactionPatch,
  o: TransactionUpdateOptions = {},
): Promise<TransactionRecord> {
  const always: Record<string, unknown> = toColumns(patch);
  if (!o.whileStatusIn && !o.ifStatusIn) {
    const columns = Object.keys(always);
    if (columns.length > 0) {
      const params = [...Object.values(always), now().toISOString(), id];
      const row = await UPDATE.get(columns.join(' ')).first(db, kind, params);
      if (!row) throw new Error(`transaction ${id} vanished during update`);
      return toTransaction(row);
    }
  }
  const guarded: Record<string, unknown> = o.whileStatusIn ? toColumns(o.whileStatusIn.patch) : {};
  const whileStatuses = statusParams(o.whileStatusIn?.statuses ?? []);
  const alwaysCols = Object.keys(always);
  const guardedCols = Object.keys(guarded);
  const key = [
    alwaysCols.join(' '),
    guardedCols.join(' '),
    String(o.whileStatusIn ? whileStatuses.length : 0),
    o.ifStatusIn ? String(statusParams(o.ifStatusIn).length) : '-',
  ].join('|');
  // The parameters in the order the text (CONDITIONAL_UPDATE) places them.
  const params: unknown[] = [];
  for (const c of alwaysCols) {
    if (c in guarded) params.push(...whileStatuses, guarded[c], always[c]);
    else params.push(always[c]);
  }
  params.push(now().toISOString());
  for (const c of guardedCols) if (!(c in always)) params.push(...whileStatuses, guarded[c]);
  params.push(id);
  if (o.ifStatusIn) params.push(...statusParams(o.ifStatusIn));
  // The changed row comes back with the update (one statement); an update whose condition did not
  // hold changes nothing and the row is read as it stands.
  const changed = await CONDITIONAL_UPDATE.get(key).first(db, kind, params);
  const after = changed ? toTransaction(changed) : await selectTransactionBy(db, kind, 'id', id);
  if (!after) throw new Error(`transaction ${id} vanished during update`);
  return after;
}
