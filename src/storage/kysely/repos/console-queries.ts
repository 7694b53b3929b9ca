/** Read-only queries for the operator console. Times are ISO UTC text, compared as text like everywhere else in the schema. */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { ConsoleQueries, ConsoleSearch } from '../../contract.js';
import type { TransactionRecord } from '../../../model/payment.js';
import type { NotificationRecord } from '../../../model/notification.js';
import type { OutboxEvent } from '../../../model/delivery.js';
import { toTransaction } from '../rows/transactions.js';
import { toNotification } from '../rows/notifications.js';
import { toEvent } from '../rows/outbox.js';

/**
 * The values of an `in` over account ids: `in ()` is no SQL, and no account id is empty (ids match
 * ACCOUNT_ID_PATTERN), so an empty list selects nothing.
 */
export function orNone(accounts: readonly string[]): readonly string[] {
  return accounts.length === 0 ? [''] : accounts;
}

function likeEscape(s: string): string {
  return `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export class KyselyConsoleQueries implements ConsoleQueries {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly account: string,
  ) {}

  /** Newest first; one row more than the page size tells whether a next page exists. */
  async searchTransactions(s: ConsoleSearch): Promise<{ items: TransactionRecord[]; more: boolean }> {
    let q = this.db.selectFrom('transactions').selectAll();
    if (s.q) {
      const pattern = likeEscape(s.q);
      // An explicit escape character: SQLite's LIKE has none by default.
      const like = (col: 'order_id' | 'gateway_order_id' | 'gateway_transaction_id') =>
        sql<boolean>`${sql.ref(col)} like ${pattern} escape '\\'`;
      q = q.where((eb) => eb.or([like('order_id'), like('gateway_order_id'), like('gateway_transaction_id')]));
    }
    if (s.mercantId) q = q.where('mercant_id', '=', s.mercantId);
    if (s.status) q = q.where('status', '=', s.status);
    if (s.paymentType) q = q.where('payment_type', '=', s.paymentType);
    if (s.from) q = q.where('created_at', '>=', s.from);
    if (s.to) q = q.where('created_at', '<', s.to);
    if (s.accounts) q = q.where('account', 'in', orNone(s.accounts));
    const rows = await q
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(s.pageSize + 1)
      .offset((s.page - 1) * s.pageSize)
      .execute();
    return { items: rows.slice(0, s.pageSize).map(toTransaction), more: rows.length > s.pageSize };
  }

  async countsByStatus(since: string, accounts?: readonly string[]): Promise<Record<string, number>> {
    let q = this.db
      .selectFrom('transactions')
      .select(['status', (eb) => eb.fn.countAll<string | number>().as('n')])
      .where('created_at', '>=', since);
    if (accounts) q = q.where('account', 'in', orNone(accounts));
    const rows = await q.groupBy('status').execute();
    return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
  }

  async paymentTypes(): Promise<string[]> {
    const rows = await this.db
      .selectFrom('transactions')
      .select('payment_type')
      .distinct()
      .where('payment_type', 'is not', null)
      .orderBy('payment_type')
      .limit(50)
      .execute();
    return rows.map((r) => r.payment_type).filter((p): p is string => p !== null);
  }

  async oldestUndelivered(accounts?: readonly string[]): Promise<string | undefined> {
    let q = this.db
      .selectFrom('outbox_events')
      .select('created_at')
      .where('state', 'in', ['pending', 'failed'])
      .where('lane', '=', 'erp');
    if (accounts) q = q.where('account', 'in', orNone(accounts));
    const row = await q.orderBy('seq', 'asc').limit(1).executeTakeFirst();
    return row?.created_at;
  }

  async lastNotification(accounts?: readonly string[]): Promise<NotificationRecord | undefined> {
    let q = this.db.selectFrom('notifications').selectAll().where('source', 'in', ['webhook', 'replay']);
    if (accounts) q = q.where('account', 'in', orNone(accounts));
    const row = await q.orderBy('id', 'desc').limit(1).executeTakeFirst();
    return row ? toNotification(row) : undefined;
  }

  async notificationsFor(transactionRef: string, gatewayOrderId: string): Promise<NotificationRecord[]> {
    const purchases = `${gatewayOrderId.replace(/[\\%_]/g, (c) => `\\${c}`)}-%`;
    const rows = await this.db
      .selectFrom('notifications')
      .selectAll()
      .where('account', '=', this.account)
      .where((eb) =>
        eb.or([
          eb('transaction_ref', '=', transactionRef),
          eb.and([
            eb('transaction_ref', 'is', null),
            eb.or([
              eb('gateway_order_id', '=', gatewayOrderId),
              sql<boolean>`${sql.ref('gateway_order_id')} like ${purchases} escape '\\'`,
            ]),
          ]),
        ]),
      )
      .orderBy('id', 'asc')
      .limit(500)
      .execute();
    return rows.map(toNotification);
  }

  async eventsForOrder(orderKey: string): Promise<OutboxEvent[]> {
    const rows = await this.db
      .selectFrom('outbox_events')
      .selectAll()
      .where('account', '=', this.account)
      .where('order_key', '=', orderKey)
      .where('lane', '=', 'erp')
      .orderBy('seq', 'asc')
      .limit(500)
      .execute();
    return rows.map(toEvent);
  }

  async undeliverable(
    state: 'failed' | 'dead' | 'both',
    limit: number,
    offset: number,
    accounts?: readonly string[],
  ): Promise<OutboxEvent[]> {
    const states = state === 'both' ? ['failed', 'dead'] : [state];
    let q = this.db.selectFrom('outbox_events').selectAll().where('state', 'in', states).where('lane', '=', 'erp');
    if (accounts) q = q.where('account', 'in', orNone(accounts));
    const rows = await q.orderBy('seq', 'asc').limit(limit).offset(offset).execute();
    return rows.map(toEvent);
  }
}
