/** What operators see of ERP deliveries: an event with its attempts. */
import { Type } from 'typebox';
import type { DeliveryAttempt, OutboxEvent } from '../../../model/delivery.js';
import { NullableInt, NullableStr, Str } from '../../schemas/common.js';
import { jsonObject } from '../../schemas/json-object.js';
import { apiTime, apiTimeOrNull } from '../../../platform/time.js';
import { ERP_EVENT_EXAMPLE } from '../../schemas/examples.js';

export const DeliveryStateSchema = Type.Union([
  Type.Literal('pending'),
  Type.Literal('delivered'),
  Type.Literal('failed'),
  Type.Literal('dead'),
]);

const AttemptSchema = Type.Object({
  attempt_no: Type.Integer(),
  started_at: Str(40),
  status_code: NullableInt,
  latency_ms: NullableInt,
  error: NullableStr(1000),
  outcome: Str(32),
  instance: NullableStr(200),
});

export const DeliverySchema = Type.Object({
  id: Str(64),
  event_id: Str(64),
  type: Str(64),
  status: DeliveryStateSchema,
  order_id: NullableStr(512),
  mercant_id: NullableStr(512),
  status_version: NullableInt,
  attempts_count: Type.Integer(),
  next_attempt_at: NullableStr(40),
  last_status_code: NullableInt,
  last_error: NullableStr(1000),
  created_at: Str(40),
  delivered_at: NullableStr(40),
  payload: Type.Record(Type.String(), Type.Unknown(), { description: 'the exact event body delivered' }),
  attempts: Type.Array(AttemptSchema, { maxItems: 10_000 }),
});

/** An event the ERP refused three times, retried later: the example the reference shows. */
export const DELIVERY_EXAMPLE = {
  id: '550321d5-d1a2-495e-a8ab-716356a7def2',
  event_id: '550321d5-d1a2-495e-a8ab-716356a7def2',
  type: 'payment.status_changed',
  status: 'failed' as const,
  order_id: 'INV/2026/0042:1',
  mercant_id: 'INV/2026/0042',
  status_version: 2,
  attempts_count: 3,
  next_attempt_at: '2026-11-22T10:21:20+07:00',
  last_status_code: 503,
  last_error: 'HTTP 503',
  created_at: '2026-11-22T10:20:00+07:00',
  delivered_at: null,
  payload: ERP_EVENT_EXAMPLE,
  attempts: [
    {
      attempt_no: 1,
      started_at: '2026-11-22T10:20:00+07:00',
      status_code: 503,
      latency_ms: 41,
      error: 'HTTP 503',
      outcome: 'failed',
      instance: 'paylink-1',
    },
  ],
};

function attemptView(a: DeliveryAttempt) {
  return {
    attempt_no: a.attemptNo,
    started_at: apiTime(a.startedAt),
    status_code: a.statusCode,
    latency_ms: a.latencyMs,
    error: a.error,
    outcome: a.outcome,
    instance: a.instance,
  };
}

/** One event with its own attempts (`attempts` may hold those of other events too). */
export function deliveryView(e: OutboxEvent, attempts: DeliveryAttempt[]) {
  const undelivered = e.state === 'pending' || e.state === 'failed';
  return {
    id: e.eventId,
    event_id: e.eventId,
    type: e.eventType,
    status: e.state,
    order_id: e.orderId,
    mercant_id: e.mercantId,
    status_version: e.statusVersion,
    attempts_count: e.attempts,
    next_attempt_at: undelivered ? apiTimeOrNull(e.nextAttemptAt) : null,
    last_status_code: e.lastStatusCode,
    last_error: e.lastError,
    created_at: apiTime(e.createdAt),
    delivered_at: apiTimeOrNull(e.deliveredAt),
    payload: jsonObject(e.payload),
    attempts: attempts.filter((a) => a.eventSeq === e.seq).map(attemptView),
  };
}
