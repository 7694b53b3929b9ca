/**
 * The outbox's rows read into its records (checked against their literal lists), and the insert of
 * a new event that both the repository and a database's own report writes run.
 */
import type { Kysely, Selectable } from 'kysely';
import {
  ATTEMPT_OUTCOMES,
  OUTBOX_LANES,
  OUTBOX_STATES,
  type DeliveryAttempt,
  type NewOutboxEvent,
  type OutboxEvent,
} from '../../../model/delivery.js';
import type { Database, DeliveryAttemptsTable, OutboxEventsTable } from '../schema.js';
import { oneOf } from './literal.js';
import { Precompiled, type DatabaseKind } from '../precompiled.js';

export type OutboxRow = Selectable<OutboxEventsTable>;

export function toEvent(r: OutboxRow): OutboxEvent {
  return {
    seq: Number(r.seq),
    lane: oneOf(OUTBOX_LANES, r.lane, 'outbox_events.lane'),
    account: r.account,
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
    traceContext: r.trace_context ?? null,
  };
}

export function toAttempt(r: Selectable<DeliveryAttemptsTable>): DeliveryAttempt {
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

const INSERT_TEXT = `
  insert into outbox_events (account, event_id, event_type, order_key, order_id, mercant_id, status_version, payload,
    state, attempts, next_attempt_at, lease_owner, lease_until, lease_token, last_status_code, last_error, created_at,
    updated_at, delivered_at, retry_from, lane, trace_context)
  values (?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, null, null, 0, null, null, ?, ?, null, ?, ?, ?)`;
const INSERT = new Precompiled<OutboxRow>(`${INSERT_TEXT} returning *`);
const INSERT_ONLY = new Precompiled<never>(INSERT_TEXT);

/**
 * A new event's first values, in the order every insert of one lists its columns: account,
 * event_id, event_type, order_key, order_id, mercant_id, status_version, payload, then
 * next_attempt_at, created_at, updated_at and retry_from, all `at`.
 */
export function newEventValues(account: string, e: NewOutboxEvent, at: string): unknown[] {
  return [
    account,
    e.eventId,
    e.eventType,
    e.orderKey,
    e.orderId,
    e.mercantId,
    e.statusVersion,
    e.payload,
    at,
    at,
    at,
    at,
  ];
}

function insertValues(e: NewOutboxEvent, now: Date, account: string): unknown[] {
  return [...newEventValues(account, e, now.toISOString()), e.lane ?? 'erp', e.traceContext ?? null];
}

/** Writes a new event, due at `now` (its retry window starting then). */
export async function insertOutboxEvent(
  db: Kysely<Database>,
  kind: DatabaseKind,
  e: NewOutboxEvent,
  now: Date,
  account: string,
): Promise<OutboxEvent> {
  const row = await INSERT.first(db, kind, insertValues(e, now, account));
  if (!row) throw new Error('outbox insert returned no row');
  return toEvent(row);
}

/** `insertOutboxEvent` for a caller that needs nothing back: no row is returned and read into a record. */
export async function writeOutboxEvent(
  db: Kysely<Database>,
  kind: DatabaseKind,
  e: NewOutboxEvent,
  now: Date,
  account: string,
): Promise<void> {
  await INSERT_ONLY.run(db, kind, insertValues(e, now, account));
}
