/**
 * Refund requests, kept before the gateway is called: a request whose outcome is unknown (timeout,
 * crash) keeps its `refund_key`, and the next refund of the same order and amount sends that key
 * again, so the gateway answers with the first refund instead of making a second one.
 */
import { sql, type Kysely, type Migration, type Selectable } from 'kysely';
import type { Database, RefundsTable } from '../schema.js';
import { oneOf } from './literal.js';

export const REFUND_STATES = ['requested', 'approved', 'refused'] as const;
export type RefundState = (typeof REFUND_STATES)[number];

export interface RefundRecord {
  id: string;
  transactionRef: string;
  refundKey: string;
  /** Requested rupiah; null = the rest. */
  amount: number | null;
  reason: string | null;
  state: RefundState;
  actor: string;
  gatewayCode: string | null;
  createdAt: string;
  updatedAt: string;
}

export type NewRefund = Pick<RefundRecord, 'id' | 'transactionRef' | 'refundKey' | 'amount' | 'reason' | 'actor'>;

function toRecord(r: Selectable<RefundsTable>): RefundRecord {
  return {
    id: r.id,
    transactionRef: r.transaction_ref,
    refundKey: r.refund_key,
    amount: r.amount === null ? null : Number(r.amount),
    reason: r.reason,
    state: oneOf(REFUND_STATES, r.state, 'refunds.state'),
    actor: r.actor,
    gatewayCode: r.gateway_code,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export class RefundsRepo {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => Date,
  ) {}

  async insert(r: NewRefund): Promise<RefundRecord> {
    const at = this.now().toISOString();
    const row: Selectable<RefundsTable> = {
      id: r.id,
      transaction_ref: r.transactionRef,
      refund_key: r.refundKey,
      amount: r.amount,
      reason: r.reason,
      state: 'requested',
      actor: r.actor,
      gateway_code: null,
      created_at: at,
      updated_at: at,
    };
    await this.db.insertInto('refunds').values(row).execute();
    return toRecord(row);
  }

  /** The oldest request of this transaction whose outcome is still unknown and that asked for `amount` (null = the rest). */
  async findOpen(transactionRef: string, amount: number | null): Promise<RefundRecord | undefined> {
    let q = this.db.selectFrom('refunds').selectAll().where('transaction_ref', '=', transactionRef).where('state', '=', 'requested');
    q = amount === null ? q.where('amount', 'is', null) : q.where('amount', '=', amount);
    const row = await q.orderBy('created_at', 'asc').limit(1).executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  async settle(id: string, state: Exclude<RefundState, 'requested'>, gatewayCode: string | null): Promise<void> {
    await this.db.updateTable('refunds').set({ state, gateway_code: gatewayCode, updated_at: this.now().toISOString() }).where('id', '=', id).execute();
  }

  /** Oldest first. */
  async listFor(transactionRef: string): Promise<RefundRecord[]> {
    const rows = await this.db.selectFrom('refunds').selectAll().where('transaction_ref', '=', transactionRef).orderBy('created_at', 'asc').limit(500).execute();
    return rows.map(toRecord);
  }
}

export function refundsMigration(kind: 'sqlite' | 'postgres'): Migration {
  const big = kind === 'postgres' ? 'bigint' : 'integer';
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
