/** What operators see of ERP deliveries: an event with its attempts. */
import { Type } from 'typebox';
import type { DeliveryAttempt, OutboxEvent } from '../../../model/delivery.js';
import { NullableInt, NullableStr, Str } from '../../schemas/common.js';
import { jsonObject } from '../../schemas/json-object.js';
import { apiTime, apiTimeOrNull } from '../../schemas/time.js';

export const DeliveryStateSchema = Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed'), Type.Literal('dead')]);

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

function attemptView(a: DeliveryAttempt) {
  return { attempt_no: a.attemptNo, started_at: apiTime(a.startedAt), status_code: a.statusCode, latency_ms: a.latencyMs, error: a.error, outcome: a.outcome, instance: a.instance };
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
