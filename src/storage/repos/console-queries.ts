/**
 * Read-only queries for the operator console: searches and counts the domain repositories do not
 * need. Times are ISO UTC text, compared as text like everywhere else in the schema.
 */
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, NotificationsTable, OutboxEventsTable, TransactionsTable } from '../schema.js';

export interface ConsoleSearch {
  /** Part of the order id, gateway order id or gateway transaction id. */
  q?: string;
  mercantId?: string;
  status?: string;
  paymentType?: string;
  from?: string;
  to?: string;
  page: number;
  pageSize: number;
}

export type TransactionRow = Selectable<TransactionsTable>;
export type NotificationRow = Selectable<NotificationsTable>;
export type EventRow = Selectable<OutboxEventsTable>;

function likeEscape(s: string): string {
  return `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export class ConsoleQueries {
  constructor(private readonly db: Kysely<Database>) {}

  /** Newest first; one row more than the page size tells whether a next page exists. */
  async searchTransactions(s: ConsoleSearch): Promise<{ rows: TransactionRow[]; more: boolean }> {
    let q = this.db.selectFrom('transactions').selectAll();
    if (s.q) {
      const pattern = likeEscape(s.q);
      // An explicit escape character: SQLite's LIKE has none by default.
      const like = (col: 'order_id' | 'gateway_order_id' | 'gateway_transaction_id') => sql<boolean>`${sql.ref(col)} like ${pattern} escape '\\'`;
      q = q.where((eb) => eb.or([like('order_id'), like('gateway_order_id'), like('gateway_transaction_id')]));
    }
    if (s.mercantId) q = q.where('mercant_id', '=', s.mercantId);
    if (s.status) q = q.where('status', '=', s.status);
    if (s.paymentType) q = q.where('payment_type', '=', s.paymentType);
    if (s.from) q = q.where('created_at', '>=', s.from);
    if (s.to) q = q.where('created_at', '<', s.to);
    const rows = await q
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(s.pageSize + 1)
      .offset((s.page - 1) * s.pageSize)
      .execute();
    return { rows: rows.slice(0, s.pageSize), more: rows.length > s.pageSize };
  }

  async countsByStatus(since: string): Promise<Record<string, number>> {
    const rows = await this.db.selectFrom('transactions').select(['status', (eb) => eb.fn.countAll<string | number>().as('n')]).where('created_at', '>=', since).groupBy('status').execute();
    return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
  }

  async paymentTypes(): Promise<string[]> {
    const rows = await this.db.selectFrom('transactions').select('payment_type').distinct().where('payment_type', 'is not', null).orderBy('payment_type').limit(50).execute();
    return rows.map((r) => r.payment_type).filter((p): p is string => p !== null);
  }

  async oldestUndelivered(): Promise<string | undefined> {
    const row = await this.db.selectFrom('outbox_events').select('created_at').where('state', 'in', ['pending', 'failed']).orderBy('seq', 'asc').limit(1).executeTakeFirst();
    return row?.created_at;
  }

  async lastNotification(): Promise<NotificationRow | undefined> {
    return this.db.selectFrom('notifications').selectAll().where('source', 'in', ['webhook', 'replay']).orderBy('id', 'desc').limit(1).executeTakeFirst();
  }

  /**
   * Everything the gateway told us about one transaction, oldest first: what was matched to it, and
   * what could not be yet (an unverified notification has no transaction) under its gateway order
   * id or one of its link purchases (`<id>-<suffix>`).
   */
  async notificationsFor(transactionRef: string, gatewayOrderId: string): Promise<NotificationRow[]> {
    const purchases = `${gatewayOrderId.replace(/[\\%_]/g, (c) => `\\${c}`)}-%`;
    return this.db
      .selectFrom('notifications')
      .selectAll()
      .where((eb) =>
        eb.or([
          eb('transaction_ref', '=', transactionRef),
          eb.and([eb('transaction_ref', 'is', null), eb.or([eb('gateway_order_id', '=', gatewayOrderId), sql<boolean>`${sql.ref('gateway_order_id')} like ${purchases} escape '\\'`])]),
        ]),
      )
      .orderBy('id', 'asc')
      .limit(500)
      .execute();
  }

  /** The ERP events of one order, in the order they are delivered. */
  async eventsForOrder(orderId: string): Promise<EventRow[]> {
    return this.db.selectFrom('outbox_events').selectAll().where('order_key', '=', orderId).orderBy('seq', 'asc').limit(500).execute();
  }

  /** Failing or dead events across orders, oldest first (the ones that wait longest). */
  async undeliverable(state: 'failed' | 'dead' | 'both', limit: number, offset: number): Promise<EventRow[]> {
    const states = state === 'both' ? ['failed', 'dead'] : [state];
    return this.db.selectFrom('outbox_events').selectAll().where('state', 'in', states).orderBy('seq', 'asc').limit(limit).offset(offset).execute();
  }
}
