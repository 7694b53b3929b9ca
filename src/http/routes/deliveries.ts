import { Type } from 'typebox';
import type { App } from '../types.js';
import { TAGS } from '../types.js';
import type { Services } from '../../types.js';
import { AppError } from '../../errors.js';
import { decodeCursor } from '../../storage/store.js';
import type { DeliveryAttempt, OutboxEvent } from '../../storage/store.js';
import { ProblemSchema } from '../../errors.js';

const Str = (maxLength: number) => Type.String({ maxLength });
const NullableStr = (maxLength: number) => Type.Union([Str(maxLength), Type.Null()]);
const NullableInt = Type.Union([Type.Integer(), Type.Null()]);
const StateEnum = Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed'), Type.Literal('dead')]);

const AttemptSchema = Type.Object({
  attempt_no: Type.Integer(),
  started_at: Str(40),
  status_code: NullableInt,
  latency_ms: NullableInt,
  error: NullableStr(1000),
  outcome: Str(32),
  instance: NullableStr(200),
});

const DeliverySchema = Type.Object({
  id: Str(64),
  event_id: Str(64),
  type: Str(64),
  status: StateEnum,
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

const ListQuery = Type.Object(
  {
    status: Type.Optional(StateEnum),
    limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,4}$', maxLength: 4, description: '1..500, default 50' })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

function attemptView(a: DeliveryAttempt) {
  return { attempt_no: a.attemptNo, started_at: a.startedAt, status_code: a.statusCode, latency_ms: a.latencyMs, error: a.error, outcome: a.outcome, instance: a.instance };
}

function parsePayload(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function deliveryView(e: OutboxEvent, attempts: DeliveryAttempt[]) {
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
    next_attempt_at: undelivered ? e.nextAttemptAt : null,
    last_status_code: e.lastStatusCode,
    last_error: e.lastError,
    created_at: e.createdAt,
    delivered_at: e.deliveredAt,
    payload: parsePayload(e.payload),
    attempts: attempts.filter((a) => a.eventSeq === e.seq).map(attemptView),
  };
}

export async function deliveryRoutes(app: App, services: Services): Promise<void> {
  app.get(
    '/api/deliveries',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.operations],
        summary: 'ERP deliveries (newest first) with their attempts; filter by status, page with the cursor',
        querystring: ListQuery,
        response: { 200: Type.Object({ items: Type.Array(DeliverySchema, { maxItems: 500 }), next_cursor: Type.Optional(Str(200)) }), 400: ProblemSchema, 401: ProblemSchema },
      },
    },
    async (req) => {
      const q = req.query;
      if (q.cursor !== undefined && !decodeCursor(q.cursor)) throw new AppError('VALIDATION_FAILED', 'The cursor is not valid.', { errors: [{ path: 'cursor', message: 'is not a cursor from this API' }] });
      const limit = q.limit === undefined ? 50 : Number(q.limit);
      if (limit < 1 || limit > 500) throw new AppError('VALIDATION_FAILED', 'limit must be 1..500.', { errors: [{ path: 'limit', message: 'must be 1..500' }] });
      const page = await services.store.outbox.list({ state: q.status, limit, cursor: q.cursor });
      const attempts = await services.store.outbox.attemptsFor(page.items.map((e) => e.seq));
      const items = page.items.map((e) => deliveryView(e, attempts));
      return page.nextCursor ? { items, next_cursor: page.nextCursor } : { items };
    },
  );

  app.post(
    '/api/deliveries/:id/retry',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.operations],
        summary: 'Re-deliver one event now (same event id and body); a dead or delivered event gets a new retry window',
        params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9-]+$' }) }, { additionalProperties: false }),
        response: { 200: DeliverySchema, 401: ProblemSchema, 404: ProblemSchema, 400: ProblemSchema },
      },
    },
    async (req) => {
      const ev = await services.store.outbox.retryNow(req.params.id, services.clock.now());
      if (!ev) throw new AppError('NOT_FOUND', 'No delivery with this id.');
      req.log.info({ audit: { action: 'delivery_retry', user: req.operatorUser, event_id: ev.eventId, order_id: ev.orderId } }, 'operator re-queued an ERP delivery');
      services.outbox.wake();
      return deliveryView(ev, await services.store.outbox.attemptsFor([ev.seq]));
    },
  );
}
