import { Type } from 'typebox';
import type { App } from '../types.js';
import { PaymentStatusSchema, TAGS, instantParam } from '../types.js';
import type { Services } from '../../types.js';
import { AppError, ProblemSchema } from '../../errors.js';
import { NoQuery } from '../runtime-config.js';
import { decodeCursor } from '../../storage/store.js';
import type { TransactionRecord } from '../../storage/store.js';

const Nullable = (t: ReturnType<typeof Type.String>) => Type.Union([t, Type.Null()]);

const ListQuery = Type.Object(
  {
    status: Type.Optional(PaymentStatusSchema),
    mercant_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    since: Type.Optional(Type.String({ format: 'date-time', maxLength: 40, description: 'Only transactions created at or after this time' })),
    limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,4}$', maxLength: 4, description: '1..1000, default 100' })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, pattern: '^[A-Za-z0-9_-]+$' })),
  },
  { additionalProperties: false },
);

const TransactionSchema = Type.Object({
  order_id: Type.String(),
  gateway_order_id: Type.String(),
  mercant_id: Type.String(),
  kind: Type.String(),
  attempt: Type.Integer(),
  nominal: Type.Integer(),
  status: PaymentStatusSchema,
  transaction_status: Nullable(Type.String()),
  fraud_status: Nullable(Type.String()),
  payment_type: Nullable(Type.String()),
  transaction_id: Nullable(Type.String()),
  payment_url: Nullable(Type.String()),
  expire_at: Nullable(Type.String()),
  transaction_time: Nullable(Type.String()),
  settlement_time: Nullable(Type.String()),
  status_version: Type.Integer(),
  created_at: Type.String(),
  updated_at: Type.String(),
});

/** The operator's view of a transaction: no stored request/gateway bodies, no Snap token. */
function view(t: TransactionRecord) {
  return {
    order_id: t.orderId,
    gateway_order_id: t.gatewayOrderId,
    mercant_id: t.mercantId,
    kind: t.kind,
    attempt: t.attempt,
    nominal: t.nominal,
    status: t.status,
    transaction_status: t.transactionStatus,
    fraud_status: t.fraudStatus,
    payment_type: t.paymentType,
    transaction_id: t.gatewayTransactionId,
    payment_url: t.paymentUrl,
    expire_at: t.expireAt,
    transaction_time: t.transactionTime,
    settlement_time: t.settlementTime,
    status_version: t.statusVersion,
    created_at: t.createdAt,
    updated_at: t.updatedAt,
  };
}

function limitOf(v: string | undefined): number {
  if (v === undefined) return 100;
  const n = Number(v);
  if (n < 1 || n > 1000) throw new AppError('VALIDATION_FAILED', 'limit must be 1..1000', { errors: [{ path: 'limit', message: 'must be 1..1000' }] });
  return n;
}

export async function operationsRoutes(app: App, services: Services): Promise<void> {
  app.get(
    '/api/transactions',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.operations],
        summary: 'Transactions, newest first',
        querystring: ListQuery,
        response: { 200: Type.Object({ items: Type.Array(TransactionSchema), next_cursor: Type.Optional(Type.String()) }), 400: ProblemSchema },
      },
    },
    async (req) => {
      const { status, mercant_id, since, cursor } = req.query;
      if (cursor !== undefined && !decodeCursor(cursor)) throw new AppError('VALIDATION_FAILED', 'Unknown cursor.', { errors: [{ path: 'cursor', message: 'is not a cursor this endpoint returned' }] });
      // Stored times are UTC ISO strings compared as text, so the filter must be one too.
      const sinceIso = instantParam('since', since)?.toISOString();
      const page = await services.store.transactions.list({ status, mercantId: mercant_id, since: sinceIso, cursor, limit: limitOf(req.query.limit) });
      return page.nextCursor ? { items: page.items.map(view), next_cursor: page.nextCursor } : { items: page.items.map(view) };
    },
  );

  app.get(
    '/metrics',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.operations],
        summary: 'Prometheus metrics (text exposition format)',
        querystring: NoQuery,
        response: { 200: Type.Unsafe<string>({ description: 'Prometheus text format 0.0.4', content: { 'text/plain': { schema: { type: 'string' } } } }) },
      },
    },
    async (req, reply) => {
      try {
        await services.outbox.refreshDepth();
      } catch (err) {
        // Metrics must still be served when the database is down; the gauge keeps its last value.
        req.log.warn({ err: { message: err instanceof Error ? err.message : String(err) } }, 'outbox depth not refreshed');
      }
      const text = await services.metrics.registry.metrics();
      return reply.type(services.metrics.registry.contentType).send(text);
    },
  );
}
