import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, DeliveryAttemptsTable, OutboxEventsTable } from '../schema.js';
import { decodeCursor, encodeCursor, type Page } from './cursor.js';
import { asOneOf, oneOf } from './literal.js';

/** CONTRACT §3 delivery states: `failed` = the last attempt failed and another is scheduled. */
export const OUTBOX_STATES = ['pending', 'delivered', 'failed', 'dead'] as const;
export type OutboxState = (typeof OUTBOX_STATES)[number];
export const ATTEMPT_OUTCOMES = ['delivered', 'failed', 'dead', 'rejected_stale_lease'] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

export interface OutboxEvent {
  seq: number;
  eventId: string;
  eventType: string;
  /** Events with the same key are delivered strictly one after another, in the order written. */
  orderKey: string;
  orderId: string | null;
  mercantId: string | null;
  statusVersion: number | null;
  /** The exact bytes delivered, identical on every retry. */
  payload: string;
  state: OutboxState;
  attempts: number;
  nextAttemptAt: string;
  leaseOwner: string | null;
  leaseUntil: string | null;
  leaseToken: number;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
  deliveredAt: string | null;
  retryFrom: string;
}

/** What a caller writes; the rest of an OutboxEvent is the outbox's own bookkeeping. */
export type NewOutboxEvent = Pick<OutboxEvent, 'eventId' | 'eventType' | 'orderKey' | 'orderId' | 'mercantId' | 'statusVersion' | 'payload'>;

export interface DeliveryAttempt {
  id: number;
  eventSeq: number;
  attemptNo: number;
  startedAt: string;
  statusCode: number | null;
  latencyMs: number | null;
  error: string | null;
  outcome: AttemptOutcome;
  instance: string | null;
}

export interface AttemptResult {
  state: 'delivered' | 'failed' | 'dead';
  /** Required for `failed`. */
  nextAttemptAt?: string;
  startedAt: string;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
}

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

type Row = Selectable<OutboxEventsTable>;

function toEvent(r: Row): OutboxEvent {
  return {
    seq: Number(r.seq),
    eventId: r.event_id,
    eventType: r.event_type,
    orderKey: r.order_key,
    orderId: r.order_id,
    mercantId: r.mercant_id,
    statusVersion: r.status_version === null ? null : Number(r.status_version),
    payload: r.payload,
    state: oneOf(OUTBOX_STATES, r.state, 'outbox_events.state'),
    attempts: Number(r.attempts),
    nextAttemptAt: r.next_attempt_at,
    leaseOwner: r.lease_owner,
    leaseUntil: r.lease_until,
    leaseToken: Number(r.lease_token),
    lastStatusCode: r.last_status_code === null ? null : Number(r.last_status_code),
    lastError: r.last_error,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    deliveredAt: r.delivered_at,
    retryFrom: r.retry_from ?? r.created_at,
  };
}

function toAttempt(r: Selectable<DeliveryAttemptsTable>): DeliveryAttempt {
  return {
    id: Number(r.id),
    eventSeq: Number(r.event_seq),
    attemptNo: Number(r.attempt_no),
    startedAt: r.started_at,
    statusCode: r.status_code === null ? null : Number(r.status_code),
    latencyMs: r.latency_ms === null ? null : Number(r.latency_ms),
    error: r.error,
    outcome: oneOf(ATTEMPT_OUTCOMES, r.outcome, 'delivery_attempts.outcome'),
    instance: r.instance,
  };
}

const UNDELIVERED = ['pending', 'failed'] as const;

/**
 * `e` is the first undelivered event of its order: only such an event may be claimed (in order per
 * order). A dead event holds its order's lane: later events wait until it is retried by hand and
 * delivered, so the ERP never gets a later status while an earlier one is missing.
 */
const FIRST_OF_ORDER = sql`not exists (
  select 1 from outbox_events p where p.order_key = e.order_key and p.seq < e.seq and p.state in ('pending', 'failed', 'dead')
)`;

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
    const result = await sql<Row>`
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
