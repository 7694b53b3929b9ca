/**
 * PostgreSQL's report writes: the notification, the transaction's change and the ERP event in one
 * statement (data-modifying CTEs). Every statement is a round trip, and separate statements would
 * take three or four (docs/performance.md). Each part runs only when the one before it wrote, so a
 * known dedupe key writes nothing at all.
 *
 * `recordNewIfUnchanged` is the same statement taking the row lock itself, outside a transaction:
 * its first part locks the transaction only while its `xmin` (the transaction id that wrote the
 * row's current version, so different after any write of the row) is the one `findCurrent` read.
 * Under READ COMMITTED, `FOR UPDATE` that waits for another writer re-checks that condition on the
 * row's newest version, so a row written meanwhile yields no lock and nothing is written. Against
 * the locked path (begin, lookup with its lock, write, commit) it saves two round trips and holds
 * no lock between statements.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../kysely/schema.js';
import type {
  CurrentWithOthers,
  ReportWrite,
  ReportWritesRepo,
  ReportWritten,
  ReportWrittenIfUnchanged,
  VersionedTransaction,
} from '../contract.js';
import { toColumns, toTransaction, type TransactionRow } from '../kysely/rows/transactions.js';
import { newEventValues } from '../kysely/rows/outbox.js';
import { Precompiled, PrecompiledFamily } from '../kysely/precompiled.js';
import { notificationValues } from '../kysely/rows/notifications.js';

type Written = TransactionRow & { notification_id: number | string | null; locked_id?: string | null };

const NOTIFICATION_COLUMNS =
  'account, dedupe_key, gateway_order_id, transaction_ref, gateway_transaction_id, transaction_status, status_code, source, result, payload, reason, received_at';

/**
 * Keyed by the columns the patch sets, then `event` or `none`, then `locked` (inside the caller's
 * transaction, which holds the lock) or `guarded` (taking the lock while the row version is the
 * one read): one text per shape, made once.
 */
const WRITE = new PrecompiledFamily<Written>((key) => {
  const parts = key.split(' ');
  const guarded = parts.pop() === 'guarded';
  const withEvent = parts.pop() === 'event';
  const set = [...parts.filter((c) => c !== ''), 'updated_at'].map((c) => `${c} = ?`).join(', ');
  const event = withEvent
    ? `, o as (
        insert into outbox_events (account, event_id, event_type, order_key, order_id, mercant_id, status_version, payload, state, attempts, next_attempt_at, lease_token, created_at, updated_at, retry_from, trace_context)
        select ?, ?, ?, ?, ?::text, ?::text, ?::integer, ?, 'pending', 0, ?, 0, ?, ?, ?, ?::text
        where exists (select 1 from u)
      )`
    : '';
  if (!guarded)
    return `
    with n as (
      insert into notifications (${NOTIFICATION_COLUMNS})
      values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::text, ?)
      on conflict (account, dedupe_key) do nothing
      returning id
    ), u as (
      update transactions set ${set} where id = ? and exists (select 1 from n)
      returning *
    )${event}
    select (select id from n) as notification_id, u.* from u`;
  return `
    with l as (
      select id from transactions where id = ? and xmin = ?::text::xid for update
    ), n as (
      insert into notifications (${NOTIFICATION_COLUMNS})
      select ?::text, ?::text, ?::text, ?::text, ?::text, ?::text, ?::text, ?::text, ?::text, ?::text, ?::text, ?::text
      where exists (select 1 from l)
      on conflict (account, dedupe_key) do nothing
      returning id
    ), u as (
      update transactions set ${set} where id = (select id from l) and exists (select 1 from n)
      returning *
    )${event}
    select (select id from l) as locked_id, (select id from n) as notification_id, u.*
    from (select 1) as one left join u on true`;
});

/** The row's version is its `xmin`: a new one for every write of the row. */
const FIND_CURRENT = new Precompiled<TransactionRow & { row_version: string }>(
  'select xmin::text as row_version, * from transactions where gateway_order_id = ? and account = ?',
);
const FIND_CURRENT_WITH = new Precompiled<TransactionRow & { row_version: string }>(
  'select xmin::text as row_version, * from transactions where gateway_order_id = any(?::text[]) and account = ?',
);

export class PostgresReportWrites implements ReportWritesRepo {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => Date,
    private readonly account: string,
  ) {}

  async recordNew(w: ReportWrite): Promise<ReportWritten> {
    const { key, notification, set, event } = this.parts(w);
    const row = await WRITE.get(`${key} locked`).first(this.db, 'postgres', [
      ...notification,
      ...set,
      w.transactionId,
      ...event,
    ]);
    if (!row) return { inserted: false };
    return { inserted: true, ...written(row) };
  }

  async findCurrent(gatewayOrderId: string): Promise<VersionedTransaction | undefined> {
    const row = await FIND_CURRENT.first(this.db, 'postgres', [gatewayOrderId, this.account]);
    if (!row) return undefined;
    const { row_version: rowVersion, ...t } = row;
    return { transaction: toTransaction(t), rowVersion };
  }

  async findCurrentWith(gatewayOrderId: string, others: readonly string[]): Promise<CurrentWithOthers> {
    const { rows } = await FIND_CURRENT_WITH.run(this.db, 'postgres', [[gatewayOrderId, ...others], this.account]);
    const out: CurrentWithOthers = { others: new Map() };
    for (const { row_version: rowVersion, ...row } of rows) {
      const t = toTransaction(row);
      if (t.gatewayOrderId === gatewayOrderId) out.current = { transaction: t, rowVersion };
      else out.others.set(t.gatewayOrderId, t);
    }
    return out;
  }

  async recordNewIfUnchanged(w: ReportWrite & { rowVersion: string }): Promise<ReportWrittenIfUnchanged> {
    const { key, notification, set, event } = this.parts(w);
    const row = await WRITE.get(`${key} guarded`).first(this.db, 'postgres', [
      w.transactionId,
      w.rowVersion,
      ...notification,
      ...set,
      ...event,
    ]);
    if (!row?.locked_id) return { outcome: 'moved' };
    if (row.notification_id === null || row.id === null) return { outcome: 'duplicate' };
    return { outcome: 'written', ...written(row) };
  }

  /** The statement's key and its parameters by part: the notification, the patch, the event. */
  private parts(w: ReportWrite) {
    const at = this.now().toISOString();
    const due = w.now.toISOString();
    const columns = toColumns(w.patch);
    const e = w.event;
    const event = e ? [...newEventValues(this.account, e, due), e.traceContext ?? null] : [];
    return {
      key: `${Object.keys(columns).join(' ')} ${e ? 'event' : 'none'}`,
      notification: notificationValues(this.account, w.notification, at),
      set: [...Object.values(columns), at],
      event,
    };
  }
}

function written(row: Written) {
  const { notification_id: notificationId, locked_id: _locked, ...transaction } = row;
  return { notificationId: Number(notificationId), transaction: toTransaction(transaction as TransactionRow) };
}
