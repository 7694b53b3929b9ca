import { randomUUID } from 'node:crypto';
import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { App } from '../types.js';
import { PaymentStatusSchema, TAGS } from '../types.js';
import type { Services } from '../../types.js';
import { AppError, ProblemSchema, isDatabaseUnavailable } from '../../errors.js';
import { handleGatewayNotification, type NotificationOutcome } from '../../domain/notification-sources.js';
import { TEST_EVENT, TestEventInputSchema, testEvent } from '../../erp/events.js';
import { NotificationBodySchema } from '../../gateway/report.js';

const Str = (maxLength: number, description?: string) => Type.String({ maxLength, ...(description ? { description } : {}) });

const WebhookAnswer = Type.Object({ status: Type.Literal('ok'), result: Str(32) });

const ReplayAnswer = Type.Object({
  result: Str(32, 'applied, duplicate, stale, unknown_status or unverified'),
  confirmed: Type.Boolean({ description: 'the status was confirmed with the gateway status API' }),
  order_id: Type.Optional(Str(512)),
  status: Type.Optional(PaymentStatusSchema),
  event_id: Type.Optional(Str(64)),
  reason: Type.Optional(Str(200)),
});

const TestNotifyAnswer = Type.Object({
  event_id: Str(64),
  outcome: Str(32, 'first attempt: delivered, failed, dead, rejected_stale_lease; pending = no attempt yet (no ERP URL, or none within the timeout)'),
  state: Str(16, 'delivery state: pending, delivered, failed, dead'),
  http_status: Type.Union([Type.Integer(), Type.Null()]),
  error: Type.Union([Str(500), Type.Null()]),
  latency_ms: Type.Union([Type.Integer(), Type.Null()]),
});

async function run(services: Services, req: FastifyRequest, body: Record<string, unknown>, source: 'webhook' | 'replay'): Promise<NotificationOutcome> {
  try {
    return await handleGatewayNotification(services, body, source);
  } catch (err) {
    if (err instanceof AppError && err.code === 'SIGNATURE_INVALID') {
      services.metrics.notifications.inc({ source, result: 'signature_invalid' });
      const orderId = typeof body.order_id === 'string' ? body.order_id.slice(0, 100) : undefined;
      req.log.warn({ security_event: 'webhook_signature_invalid', source, order_id: orderId, ip: req.ip }, 'gateway notification rejected: signature invalid');
    }
    // The gateway retries a 503 four times but a 500 only once.
    if (!(err instanceof AppError) && isDatabaseUnavailable(err)) throw new AppError('DATABASE_UNAVAILABLE');
    throw err;
  }
}

export async function webhookRoutes(app: App, services: Services): Promise<void> {
  app.post(
    '/webhook/midtrans',
    {
      bodyLimit: 64 * 1024,
      config: { auth: 'sig', rawStrings: true },
      schema: {
        tags: [TAGS.webhook],
        summary: 'Gateway notification (signature-verified; recorded, applied and queued for the ERP in one transaction)',
        body: NotificationBodySchema,
        response: { 200: WebhookAnswer, 400: ProblemSchema, 401: ProblemSchema, 413: ProblemSchema, 415: ProblemSchema, 503: ProblemSchema },
      },
    },
    async (req) => {
      const outcome = await run(services, req, req.body, 'webhook');
      return { status: 'ok' as const, result: outcome.result };
    },
  );

  app.post(
    '/webhook/midtrans/replay',
    {
      bodyLimit: 64 * 1024,
      config: { auth: 'op', rawStrings: true },
      schema: {
        tags: [TAGS.webhook],
        summary: 'Re-run a captured notification through the same pipeline (signature still verified)',
        body: NotificationBodySchema,
        response: { 200: ReplayAnswer, 400: ProblemSchema, 401: ProblemSchema, 413: ProblemSchema, 503: ProblemSchema },
      },
    },
    async (req) => {
      const outcome = await run(services, req, req.body, 'replay');
      req.log.info({ audit: { action: 'webhook_replay', user: req.operatorUser, order_id: typeof req.body.order_id === 'string' ? req.body.order_id.slice(0, 100) : undefined, result: outcome.result } }, 'operator replayed a notification');
      if ('transaction' in outcome) {
        return { result: outcome.result, confirmed: outcome.confirmed, order_id: outcome.transaction.orderId, status: outcome.status, event_id: outcome.eventId };
      }
      return { result: outcome.result, confirmed: false, reason: outcome.reason };
    },
  );

  if (services.config.exposeDevApi) await testNotifyRoute(app, services);
}

async function testNotifyRoute(app: App, services: Services): Promise<void> {
  app.post(
    '/test-notify-erp',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.dev],
        summary: 'Send a test ERP event (type payment.test) through the outbox and report its first delivery attempt',
        body: TestEventInputSchema,
        response: { 200: TestNotifyAnswer, 400: ProblemSchema, 401: ProblemSchema },
      },
      // The body is optional: no body at all means all defaults (Fastify would validate `undefined`).
      preValidation: async (req) => {
        if (req.body === undefined || req.body === null) req.body = {};
      },
    },
    async (req) => {
      const s = await services.settings.current();
      const eventId = randomUUID();
      const payload = testEvent(req.body, eventId, services.clock.now());
      const ev = await services.store.outbox.enqueue({
        eventId,
        eventType: TEST_EVENT,
        orderKey: `test:${eventId}`,
        orderId: payload.order_id,
        mercantId: payload.mercant_id,
        statusVersion: null,
        payload: JSON.stringify(payload),
      }, services.clock.now());
      services.outbox.wake();
      const outcome = s.erp.notify_url ? await services.outbox.waitForAttempt(ev.seq, 0, s.erp.timeout_ms + 2_000) : undefined;
      const after = await services.store.outbox.findByEventId(eventId);
      const first = (await services.store.outbox.attemptsFor([ev.seq]))[0];
      return {
        event_id: eventId,
        outcome: outcome ?? 'pending',
        state: after?.state ?? 'pending',
        http_status: first?.statusCode ?? null,
        error: first ? first.error : s.erp.notify_url ? 'no attempt within the ERP timeout' : 'erp.notify_url is not set: the event waits in the outbox',
        latency_ms: first?.latencyMs ?? null,
      };
    },
  );
}
