import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { OUTBOX_STATES, toAttempt, toEvent, type AttemptResult, type DeliveryAttempt, type NewOutboxEvent, type OutboxEvent, type OutboxRow, type OutboxState } from './outbox-model.js';
import { decodeCursor, encodeCursor, type Page } from './cursor.js';
import { asOneOf } from './literal.js';

export { OUTBOX_STATES, ATTEMPT_OUTCOMES, type OutboxState, type AttemptOutcome, type OutboxEvent, type NewOutboxEvent, type DeliveryAttempt, type AttemptResult } from './outbox-model.js';

export interface OutboxRepo {
  /** `now`: the domain clock's time (due at once, retry window starts); default the store's clock. */
  enqueue(e: NewOutboxEvent, now?: Date): Promise<OutboxEvent>;
  /**
   * Leases up to `limit` due events to `owner` until `now + leaseMs`, bumping each one's fencing
   * token. Never an event while an earlier one of the same order key is pending, failed or dead.
   * PostgreSQL: `FOR UPDATE SKIP LOCKED`, so instances never claim the same row.
   */
  claimDue(owner: string, now: Date, leaseMs: number, limit: number): Promise<OutboxEvent[]>;
  /**
   * Records an attempt and moves the event on, only if `leaseToken` is still the event's token.
   * False (and an attempt recorded as `rejected_stale_lease`) when the lease was lost meanwhile.
   */
  complete(seq: number, leaseToken: number, instance: string, r: AttemptResult): Promise<boolean>;
  findByEventId(eventId: string): Promise<OutboxEvent | undefined>;
  /** Newest first. */
  list(filter: { state?: OutboxState; limit?: number; cursor?: string }): Promise<Page<OutboxEvent>>;
  attemptsFor(seqs: number[]): Promise<DeliveryAttempt[]>;
  /**
   * Due now, same event id, a fresh retry window; in-flight attempts are fenced off. The order's
   * later events held behind it get a fresh window too: they waited, they did not fail.
   */
  retryNow(eventId: string, now: Date): Promise<OutboxEvent | undefined>;
  countByState(): Promise<Record<OutboxState, number>>;
  /**
   * Frees every lease (bumping the fencing tokens). Only for SQLite at start-up: one process owns
   * the file, so a lease still set was left by a previous run of this process that died.
   */
  releaseAllLeases(): Promise<number>;
  /** Earliest `next_attempt_at` among events still to deliver. */
  nextDueAt(): Promise<string | undefined>;
}

const UNDELIVERED = ['pending', 'failed'] as const;

/**
 * `e` is the first undelivered event of its order: only such an event may be claimed (in order per
 * order). A dead event holds its order's lane: later events wait until it is retried by hand and
 * delivered, so the ERP never gets a later status while an earlier one is missing.
 */
// A subquery with LIMIT, not NOT EXISTS: PostgreSQL turns NOT EXISTS into an anti-join whose plan,
// with statistics older than a burst of waiting events, scanned every undelivered event for each
// candidate (15 s with 100,000 waiting); a limited subquery runs per candidate on outbox_order_idx.
const FIRST_OF_ORDER = sql`(
  select p.seq from outbox_events p where p.order_key = e.order_key and p.seq < e.seq and p.state in ('pending', 'failed', 'dead') limit 1
) is null`;

/**
 * SQLite's planner, without statistics, prefers the `(state, …)` indexes and then sorts or scans
 * every waiting event; the claim must walk the partial index in due order and stop early.
 * PostgreSQL picks the partial index from its statistics.
 */
function indexedBy(kind: 'sqlite' | 'postgres', index: 'outbox_claimable_idx' | 'outbox_leased_idx') {
  return kind === 'sqlite' ? sql.raw(`indexed by ${index}`) : sql``;
}

export class KyselyOutboxRepo implements OutboxRepo {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => Date,
    private readonly kind: 'sqlite' | 'postgres',
  ) {}

  async enqueue(e: NewOutboxEvent, now?: Date): Promise<OutboxEvent> {
    const at = (now ?? this.now()).toISOString();
    const row = await this.db
      .insertInto('outbox_events')
      .values({
        event_id: e.eventId,
        event_type: e.eventType,
        order_key: e.orderKey,
        order_id: e.orderId,
        mercant_id: e.mercantId,
        status_version: e.statusVersion,
        payload: e.payload,
        state: 'pending',
        attempts: 0,
        next_attempt_at: at,
        lease_owner: null,
        lease_until: null,
        lease_token: 0,
        last_status_code: null,
        last_error: null,
        created_at: at,
        updated_at: at,
        delivered_at: null,
        retry_from: at,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toEvent(row);
  }

  async claimDue(owner: string, now: Date, leaseMs: number, limit: number): Promise<OutboxEvent[]> {
    const at = now.toISOString();
    const until = new Date(now.getTime() + leaseMs).toISOString();
    const lock = this.kind === 'postgres' ? sql`for update skip locked` : sql``;
    const result = await sql<OutboxRow>`
      update outbox_events set lease_owner = ${owner}, lease_until = ${until}, lease_token = lease_token + 1, updated_at = ${at}
      where seq in (
        select e.seq from outbox_events e ${indexedBy(this.kind, 'outbox_claimable_idx')}
        where e.state in ('pending', 'failed') and e.next_attempt_at <= ${at}
          and (e.lease_until is null or e.lease_until <= ${at})
          and ${FIRST_OF_ORDER}
        order by e.next_attempt_at, e.seq
        limit ${limit}
        ${lock}
      )
      returning *`.execute(this.db);
    return result.rows.map(toEvent).sort((a, b) => a.seq - b.seq);
  }

  async complete(seq: number, leaseToken: number, instance: string, r: AttemptResult): Promise<boolean> {
    if (this.kind === 'postgres') return this.completeInOneStatement(seq, leaseToken, instance, r);
    const run = async (db: Kysely<Database>): Promise<boolean> => {
      const at = this.now().toISOString();
      const res = await db
        .updateTable('outbox_events')
        .set((eb) => ({
          state: r.state,
          attempts: eb('attempts', '+', 1),
          next_attempt_at: r.nextAttemptAt ?? at,
          lease_owner: null,
          lease_until: null,
          last_status_code: r.statusCode,
          last_error: r.error,
          updated_at: at,
          delivered_at: r.state === 'delivered' ? at : null,
        }))
        .where('seq', '=', seq)
        .where('lease_token', '=', leaseToken)
        .where('state', 'in', UNDELIVERED)
        .returning('attempts')
        .executeTakeFirst();
      const attempts = res ? Number(res.attempts) : await this.attemptCount(db, seq);
      await db
        .insertInto('delivery_attempts')
        .values({
          event_seq: seq,
          attempt_no: res ? attempts : attempts + 1,
          started_at: r.startedAt,
          status_code: r.statusCode,
          latency_ms: r.latencyMs,
          error: r.error,
          outcome: res ? r.state : 'rejected_stale_lease',
          instance,
        })
        .execute();
      return res !== undefined;
    };
    return this.db.isTransaction ? run(this.db) : this.db.transaction().execute((trx) => run(trx));
  }

  /**
   * PostgreSQL: the fenced update and the attempt record in one statement — one round trip where a
   * transaction of two statements takes four (begin, update, insert, commit). Every part of a
   * statement sees the same snapshot, so a lost lease records `attempts + 1` of the row as it was.
   * (A data-modifying part of a WITH runs whether or not anything reads it.)
   */
  private async completeInOneStatement(seq: number, leaseToken: number, instance: string, r: AttemptResult): Promise<boolean> {
    const at = this.now().toISOString();
    const result = await sql<{ kept: boolean }>`
      with u as (
        update outbox_events set state = ${r.state}, attempts = attempts + 1, next_attempt_at = ${r.nextAttemptAt ?? at},
          lease_owner = null, lease_until = null, last_status_code = ${r.statusCode}::integer, last_error = ${r.error},
          updated_at = ${at}, delivered_at = ${r.state === 'delivered' ? at : null}
        where seq = ${seq} and lease_token = ${leaseToken} and state in ('pending', 'failed')
        returning attempts
      ), a as (
        insert into delivery_attempts (event_seq, attempt_no, started_at, status_code, latency_ms, error, outcome, instance)
        select ${seq}::bigint, coalesce((select attempts from u), (select attempts + 1 from outbox_events where seq = ${seq}), 1),
          ${r.startedAt}, ${r.statusCode}::integer, ${r.latencyMs}::integer, ${r.error}::text,
          case when exists (select 1 from u) then ${r.state}::text else 'rejected_stale_lease' end, ${instance}::text
      )
      select exists (select 1 from u) as kept`.execute(this.db);
    return result.rows[0]?.kept === true;
  }

  private async attemptCount(db: Kysely<Database>, seq: number): Promise<number> {
    const row = await db.selectFrom('outbox_events').select('attempts').where('seq', '=', seq).executeTakeFirst();
    return row ? Number(row.attempts) : 0;
  }

  async findByEventId(eventId: string): Promise<OutboxEvent | undefined> {
    const row = await this.db.selectFrom('outbox_events').selectAll().where('event_id', '=', eventId).executeTakeFirst();
    return row ? toEvent(row) : undefined;
  }

  async list(filter: { state?: OutboxState; limit?: number; cursor?: string }): Promise<Page<OutboxEvent>> {
    const limit = Math.min(Math.max(filter.limit ?? 50, 1), 500);
    let q = this.db.selectFrom('outbox_events').selectAll();
    if (filter.state) q = q.where('state', '=', filter.state);
    const cursor = filter.cursor ? decodeCursor(filter.cursor) : undefined;
    if (cursor) q = q.where('seq', '<', Number(cursor.id));
    const rows = await q.orderBy('seq', 'desc').limit(limit + 1).execute();
    const items = rows.slice(0, limit).map(toEvent);
    const last = items[items.length - 1];
    return rows.length > limit && last ? { items, nextCursor: encodeCursor({ at: last.createdAt, id: String(last.seq) }) } : { items };
  }

  async attemptsFor(seqs: number[]): Promise<DeliveryAttempt[]> {
    if (seqs.length === 0) return [];
    const rows = await this.db.selectFrom('delivery_attempts').selectAll().where('event_seq', 'in', seqs).orderBy('id', 'asc').execute();
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
      .where('seq', '>', row.seq)
      .where('state', 'in', UNDELIVERED)
      .execute();
    return toEvent(row);
  }

  async countByState(): Promise<Record<OutboxState, number>> {
    const rows = await this.db.selectFrom('outbox_events').select((eb) => ['state', eb.fn.countAll<number>().as('n')]).groupBy('state').execute();
    const out: Record<OutboxState, number> = { pending: 0, delivered: 0, failed: 0, dead: 0 };
    for (const r of rows) {
      const state = asOneOf(OUTBOX_STATES, r.state);
      if (state) out[state] = Number(r.n);
    }
    return out;
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
    // Only the first undelivered event of each order can be claimed, and not before its lease ends:
    // an event waiting behind its predecessor must not make the worker poll for it. Two index walks
    // that stop early (outbox_claimable_idx in due order, outbox_leased_idx over the few leased
    // events) instead of a minimum over every waiting event.
    const free = await sql<{ due: string }>`
      select e.next_attempt_at as due from outbox_events e ${indexedBy(this.kind, 'outbox_claimable_idx')}
      where e.state in ('pending', 'failed') and (e.lease_until is null or e.lease_until <= e.next_attempt_at) and ${FIRST_OF_ORDER}
      order by e.next_attempt_at limit 1`.execute(this.db);
    const leased = await sql<{ due: string | null }>`
      select min(e.lease_until) as due from outbox_events e ${indexedBy(this.kind, 'outbox_leased_idx')}
      where e.lease_until is not null and e.state in ('pending', 'failed') and e.lease_until > e.next_attempt_at and ${FIRST_OF_ORDER}`.execute(this.db);
    const dues = [free.rows[0]?.due, leased.rows[0]?.due].filter((d): d is string => typeof d === 'string');
    return dues.length === 0 ? undefined : dues.reduce((a, b) => (a <= b ? a : b));
  }
}
