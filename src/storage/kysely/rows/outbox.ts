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

/** Writes a new event, due at `now` (its retry window starting then). */
export async function insertOutboxEvent(
  db: Kysely<Database>,
  e: NewOutboxEvent,
  now: Date,
  account: string,
): Promise<OutboxEvent> {
  const at = now.toISOString();
  const row = await db
    .insertInto('outbox_events')
    .values({
      account,
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
      lane: e.lane ?? 'erp',
      trace_context: e.traceContext ?? null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toEvent(row);
}
