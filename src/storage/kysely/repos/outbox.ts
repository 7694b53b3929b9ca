import { orNone } from './console-queries.js';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { insertOutboxEvent, toAttempt, toEvent, type OutboxRow } from '../rows/outbox.js';
import {
  OUTBOX_STATES,
  type AttemptResult,
  type DeliveryAttempt,
  type NewOutboxEvent,
  type OutboxEvent,
  type OutboxLane,
  type OutboxState,
} from '../../../model/delivery.js';
import type { Page } from '../../../model/page.js';
import type { AttemptCompletionOf, OutboxRepo } from '../../contract.js';
import type { SqlDialect } from '../dialect.js';
import type { Backend } from '../backend.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import { asOneOf } from '../rows/literal.js';
import { PrecompiledFamily } from '../precompiled.js';

const UNDELIVERED = ['pending', 'failed'] as const;

/**
 * Only the first undelivered event of its order may be claimed (in order per order): the head that
 * `outbox_lanes` names (migration 042, kept by triggers), with the time it can next be claimed (its
 * due time or its lease's end). A dead event stays its order's head with no time: later events wait
 * until it is retried by hand and delivered, so the ERP never gets a later status while an earlier
 * one is missing. The same order id in two accounts is two orders, and an alert's key never holds
 * an ERP event.
 *
 * A claim reads the first `limit` heads of its lane that can be claimed now, in that order (one
 * index walk that stops; a subquery of its own, so PostgreSQL plans it as such whatever it guesses
 * of the join), and takes their events after checking each again: on PostgreSQL the event row is
 * what is locked, and a head that another instance holds or has just delivered is skipped.
 * Keyed by `<kind>|<index hint>|<skip-locked clause>|<all or account>`.
 */
const CLAIM = new PrecompiledFamily<OutboxRow>((key) => {
  const [, hint, skip, scope] = key.split('|');
  const scoped = scope === 'account' ? 'h.account = ? and h.lane = ?' : 'h.lane = ?';
  return `
    update outbox_events set lease_owner = ?, lease_until = ?, lease_token = lease_token + 1, updated_at = ?
    where seq in (
      select e.seq from (
        select h.head_seq from outbox_lanes h ${hint} where ${scoped} and h.due_at <= ?
        order by h.due_at, h.head_seq limit ?
      ) c cross join outbox_events e
      where e.seq = c.head_seq and e.state in ('pending', 'failed') and e.next_attempt_at <= ?
        and (e.lease_until is null or e.lease_until <= ?)
      ${skip}
    )
    returning *`;
});

/** Keyed by `<kind>|<index hint>`: the first time a head can be claimed (see `nextDueAt`). */
const NEXT_DUE = new PrecompiledFamily<{ due: string | null }>(
  (key) => `select min(h.due_at) as due from outbox_lanes h ${key.split('|')[1] ?? ''} where h.due_at is not null`,
);

export class KyselyOutboxRepo implements OutboxRepo {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => Date,
    private readonly backend: Backend,
    private readonly account: string,
  ) {
    this.dialect = backend.dialect;
  }

  private readonly dialect: SqlDialect;

  enqueue(e: NewOutboxEvent, now?: Date): Promise<OutboxEvent> {
    return insertOutboxEvent(this.db, this.dialect.kind, e, now ?? this.now(), this.account);
  }

  async claimDue(
    owner: string,
    now: Date,
    leaseMs: number,
    limit: number,
    account?: string,
    lane: OutboxLane = 'erp',
  ): Promise<OutboxEvent[]> {
    const at = now.toISOString();
    const until = new Date(now.getTime() + leaseMs).toISOString();
    // One account's claim walks that account's due heads only, so another account's backlog of
    // due-but-failing events never fills it.
    const d = this.dialect;
    const index = account === undefined ? 'outbox_lanes_due_idx' : 'outbox_lanes_account_due_idx';
    const key = `${d.kind}|${d.indexedBy(index)}|${d.skipLocked}|${account === undefined ? 'all' : 'account'}`;
    const scope = account === undefined ? [lane] : [account, lane];
    const result = await CLAIM.get(key).run(this.db, d.kind, [owner, until, at, ...scope, at, limit, at, at]);
    return result.rows.map(toEvent).sort((a, b) => a.seq - b.seq);
  }

  complete(seq: number, leaseToken: number, instance: string, r: AttemptResult): Promise<boolean> {
    return this.backend.completeAttempt(this.db, this.now().toISOString(), { seq, leaseToken, instance, result: r });
  }

  async completeMany(instance: string, items: readonly AttemptCompletionOf[]): Promise<boolean[]> {
    if (items.length === 0) return [];
    if (new Set(items.map((i) => i.seq)).size !== items.length) throw new Error('completeMany: an event given twice');
    return this.backend.completeAttempts(this.db, this.now().toISOString(), instance, items);
  }

  async findByEventId(eventId: string): Promise<OutboxEvent | undefined> {
    const row = await this.db
      .selectFrom('outbox_events')
      .selectAll()
      .where('event_id', '=', eventId)
      .executeTakeFirst();
    return row ? toEvent(row) : undefined;
  }

  async list(filter: {
    account?: string;
    accounts?: readonly string[];
    state?: OutboxState;
    limit?: number;
    cursor?: string;
  }): Promise<Page<OutboxEvent>> {
    const limit = Math.min(Math.max(filter.limit ?? 50, 1), 500);
    let q = this.db.selectFrom('outbox_events').selectAll().where('lane', '=', 'erp');
    if (filter.account) q = q.where('account', '=', filter.account);
    if (filter.accounts) q = q.where('account', 'in', orNone(filter.accounts));
    if (filter.state) q = q.where('state', '=', filter.state);
    const cursor = filter.cursor ? decodeCursor(filter.cursor) : undefined;
    if (cursor) q = q.where('seq', '<', Number(cursor.id));
    const rows = await q
      .orderBy('seq', 'desc')
      .limit(limit + 1)
      .execute();
    const items = rows.slice(0, limit).map(toEvent);
    const last = items[items.length - 1];
    return rows.length > limit && last
      ? { items, nextCursor: encodeCursor({ at: last.createdAt, id: String(last.seq) }) }
      : { items };
  }

  async attemptsFor(seqs: number[]): Promise<DeliveryAttempt[]> {
    if (seqs.length === 0) return [];
    const rows = await this.db
      .selectFrom('delivery_attempts')
      .selectAll()
      .where('event_seq', 'in', seqs)
      .orderBy('id', 'asc')
      .execute();
    return rows.map(toAttempt);
  }

  async retryNow(eventId: string, now: Date): Promise<OutboxEvent | undefined> {
    const at = now.toISOString();
    const row = await this.db
      .updateTable('outbox_events')
      .set((eb) => ({
        state: 'pending',
        next_attempt_at: at,
        retry_from: at,
        lease_owner: null,
        lease_until: null,
        lease_token: eb('lease_token', '+', 1),
        delivered_at: null,
        updated_at: this.now().toISOString(),
      }))
      .where('event_id', '=', eventId)
      .returningAll()
      .executeTakeFirst();
    if (!row) return undefined;
    await this.db
      .updateTable('outbox_events')
      .set({ retry_from: at })
      .where('order_key', '=', row.order_key)
      .where('account', '=', row.account)
      .where('lane', '=', row.lane)
      .where('seq', '>', row.seq)
      .where('state', 'in', UNDELIVERED)
      .execute();
    return toEvent(row);
  }

  async countByState(accounts?: readonly string[]): Promise<Record<OutboxState, number>> {
    let q = this.db.selectFrom('outbox_events').select((eb) => ['state', eb.fn.countAll<number>().as('n')]);
    if (accounts) q = q.where('account', 'in', orNone(accounts));
    const rows = await q.groupBy('state').execute();
    const out: Record<OutboxState, number> = { pending: 0, delivered: 0, failed: 0, dead: 0 };
    for (const r of rows) {
      const state = asOneOf(OUTBOX_STATES, r.state);
      if (state) out[state] = Number(r.n);
    }
    return out;
  }

  async oldestUndeliveredAt(account?: string): Promise<string | undefined> {
    // The first seq of each state on outbox_state_seq_idx, or outbox_account_state_seq_idx for one
    // account (another account's backlog is never walked): seq follows creation order.
    const first = (state: 'pending' | 'failed') =>
      account === undefined
        ? sql`(select created_at from outbox_events where state = ${state} and lane = 'erp' order by seq limit 1)`
        : sql`(select created_at from outbox_events where account = ${account} and state = ${state} and lane = 'erp' order by seq limit 1)`;
    const res = await sql<{ at: string | null }>`
      select min(t.at) as at from (
        select ${first('pending')} as at
        union all
        select ${first('failed')} as at
      ) t`.execute(this.db);
    return res.rows[0]?.at ?? undefined;
  }

  async releaseAllLeases(): Promise<number> {
    const res = await this.db
      .updateTable('outbox_events')
      .set((eb) => ({ lease_owner: null, lease_until: null, lease_token: eb('lease_token', '+', 1) }))
      .where('lease_owner', 'is not', null)
      .where('state', 'in', UNDELIVERED)
      .executeTakeFirst();
    return Number(res.numUpdatedRows);
  }

  async nextDueAt(): Promise<string | undefined> {
    // Only a head can be claimed, and not before its lease ends: an event waiting behind its
    // predecessor, or one in flight, must not make the worker poll for it. The lanes keep that time
    // per order; their first is one seek (outbox_lanes_due_idx).
    const d = this.dialect;
    const res = await NEXT_DUE.get(`${d.kind}|${d.indexedBy('outbox_lanes_due_idx')}`).run(this.db, d.kind, []);
    return res.rows[0]?.due ?? undefined;
  }

  async inWindow(filter: {
    since: string;
    until?: string;
    orderId?: string;
    state?: OutboxState;
    account?: string;
    accounts?: readonly string[];
    limit: number;
  }): Promise<OutboxEvent[]> {
    let q = this.db
      .selectFrom('outbox_events')
      .selectAll()
      .where('lane', '=', 'erp')
      .where('created_at', '>=', filter.since);
    if (filter.until) q = q.where('created_at', '<', filter.until);
    if (filter.orderId) q = q.where('order_id', '=', filter.orderId);
    if (filter.state) q = q.where('state', '=', filter.state);
    if (filter.account) q = q.where('account', '=', filter.account);
    if (filter.accounts) q = q.where('account', 'in', orNone(filter.accounts));
    return (await q.orderBy('seq', 'asc').limit(filter.limit).execute()).map(toEvent);
  }

  async release(seq: number, leaseToken: number): Promise<boolean> {
    const res = await this.db
      .updateTable('outbox_events')
      .set({ lease_owner: null, lease_until: null })
      .where('seq', '=', seq)
      .where('lease_token', '=', leaseToken)
      .where('state', 'in', UNDELIVERED)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  async dueNow(account: string, now: Date, lane: OutboxLane = 'erp'): Promise<number> {
    // Only a failed event was given a time after the one it was written at: the events never tried,
    // and those waiting behind their order, are due since they were written. So only the failed
    // ones are moved, back to their written time (a seek on outbox_account_state_seq_idx), and the
    // claim (due time, then seq) takes the backlog in the order written, whether or not a failed
    // event's retry time has passed meanwhile. Moving every waiting event would write a row and its
    // lane per event of the backlog: with 100,000 waiting, 686 ms on SQLite's event loop and 3.8 s
    // on PostgreSQL, against 3–4 ms (bench/due-now.ts).
    const at = now.toISOString();
    const res = await this.db
      .updateTable('outbox_events')
      .set((eb) => ({
        next_attempt_at: eb.case().when('created_at', '<', at).then(eb.ref('created_at')).else(at).end(),
        updated_at: this.now().toISOString(),
      }))
      .where('account', '=', account)
      .where('state', '=', 'failed')
      .where('lane', '=', lane)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', at)]))
      .executeTakeFirst();
    return Number(res.numUpdatedRows);
  }
}
