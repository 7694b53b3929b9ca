/** The outbox's records as the rest of the service sees them, and their reading from rows (checked against their literal lists). */
import type { Selectable } from 'kysely';
import type { DeliveryAttemptsTable, OutboxEventsTable } from '../schema.js';
import { oneOf } from './literal.js';

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

export type OutboxRow = Selectable<OutboxEventsTable>;

export function toEvent(r: OutboxRow): OutboxEvent {
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

