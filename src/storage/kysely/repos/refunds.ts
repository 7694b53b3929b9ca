/**
 * Refund requests, kept before the gateway is called. One request at a time per payment: the
 * request that calls the gateway holds a lease on its refund; a request whose outcome stayed unknown
 * (timeout, crash) is resolved from the gateway's own list of refunds before another is accepted.
 */
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, RefundsTable } from '../schema.js';
import { oneOf } from '../rows/literal.js';
import { REFUND_STATES, type NewRefund, type RefundRecord, type RefundState } from '../../../model/refund.js';
import type { RefundsRepo } from '../../contract.js';

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
    leaseUntil: r.lease_until,
    requestKey: r.request_key,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export class KyselyRefundsRepo implements RefundsRepo {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => Date,
    private readonly account: string,
  ) {}

  async insert(r: NewRefund): Promise<RefundRecord> {
    const at = this.now().toISOString();
    const row: Selectable<RefundsTable> = {
      id: r.id,
      account: this.account,
      transaction_ref: r.transactionRef,
      refund_key: r.refundKey,
      amount: r.amount,
      reason: r.reason,
      state: 'requested',
      actor: r.actor,
      gateway_code: null,
      lease_until: r.leaseUntil,
      request_key: r.requestKey,
      created_at: at,
      updated_at: at,
    };
    await this.db.insertInto('refunds').values(row).execute();
    return toRecord(row);
  }

  /** The requests of this transaction whose outcome is unknown, oldest first. */
  async listOpen(transactionRef: string): Promise<RefundRecord[]> {
    const rows = await this.db
      .selectFrom('refunds')
      .selectAll()
      .where('transaction_ref', '=', transactionRef)
      .where('state', '=', 'requested')
      .orderBy('created_at', 'asc')
      .limit(100)
      .execute();
    return rows.map(toRecord);
  }

  /** The refund a caller asked for with this request key, if any. */
  async findByRequestKey(transactionRef: string, requestKey: string): Promise<RefundRecord | undefined> {
    const row = await this.db
      .selectFrom('refunds')
      .selectAll()
      .where('transaction_ref', '=', transactionRef)
      .where('request_key', '=', requestKey)
      .executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  /** Whole rupiah of this transaction's refunds the gateway approved. */
  async getApprovedTotal(transactionRef: string): Promise<number> {
    const row = await this.db
      .selectFrom('refunds')
      .select(sql<number | string | null>`sum(amount)`.as('total'))
      .where('transaction_ref', '=', transactionRef)
      .where('state', '=', 'approved')
      .executeTakeFirst();
    return Number(row?.total ?? 0);
  }

  /** Takes the lease of a request still `requested` that nobody holds at `now`; false when it is held or settled. */
  async claimLease(id: string, now: Date, until: Date): Promise<boolean> {
    const r = await this.db
      .updateTable('refunds')
      .set({ lease_until: until.toISOString(), updated_at: this.now().toISOString() })
      .where('id', '=', id)
      .where('state', '=', 'requested')
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now.toISOString())]))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Gives up the lease: the outcome stays unknown, and the next request asks the gateway about it. */
  async releaseLease(id: string): Promise<void> {
    await this.db
      .updateTable('refunds')
      .set({ lease_until: null, updated_at: this.now().toISOString() })
      .where('id', '=', id)
      .where('state', '=', 'requested')
      .execute();
  }

  /** Settles a request nobody holds at `now` (false when it is held again or already settled). */
  async settleIdle(
    id: string,
    state: Exclude<RefundState, 'requested'>,
    gatewayCode: string | null,
    now: Date,
  ): Promise<boolean> {
    const r = await this.db
      .updateTable('refunds')
      .set({ state, gateway_code: gatewayCode, lease_until: null, updated_at: this.now().toISOString() })
      .where('id', '=', id)
      .where('state', '=', 'requested')
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now.toISOString())]))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** The outcome, and the lease given up. */
  async settle(id: string, state: Exclude<RefundState, 'requested'>, gatewayCode: string | null): Promise<void> {
    await this.db
      .updateTable('refunds')
      .set({ state, gateway_code: gatewayCode, lease_until: null, updated_at: this.now().toISOString() })
      .where('id', '=', id)
      .execute();
  }

  async findById(id: string): Promise<RefundRecord | undefined> {
    const row = await this.db.selectFrom('refunds').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  /** Oldest first. */
  async listFor(transactionRef: string): Promise<RefundRecord[]> {
    const rows = await this.db
      .selectFrom('refunds')
      .selectAll()
      .where('transaction_ref', '=', transactionRef)
      .orderBy('created_at', 'asc')
      .limit(500)
      .execute();
    return rows.map(toRecord);
  }
}
