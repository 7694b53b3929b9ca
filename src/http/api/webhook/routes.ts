import type { FastifyRequest } from 'fastify';
import { TAGS, type RoutePlugin } from '../../types.js';
import type { Deps } from '../../../types.js';
import { AppError } from '../../../platform/errors.js';
import { operatorActor } from '../../plugins/actor.js';
import { ReplayAnswerSchema, WebhookAnswerSchema, replayAnswer, webhookAnswer } from './views.js';
import { handleGatewayNotification, replayNotification, type NotificationOutcome } from '../../../domain/reports/verify.js';
import { NotificationBodySchema } from '../../../gateway/midtrans/report.js';
import { problems } from '../../schemas/problems.js';

/**
 * A notification refused for its signature is counted and logged as a security event, with the
 * client's address. Every error is then answered by the error mapper, which makes a database that
 * is down a 503: the gateway retries a 503 four times but a 500 only once.
 */
async function asGatewaySees(services: Deps<'metrics'>, req: FastifyRequest, body: Record<string, unknown>, source: 'webhook' | 'replay', run: () => Promise<NotificationOutcome>): Promise<NotificationOutcome> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof AppError && err.code === 'SIGNATURE_INVALID') {
      services.metrics.notifications.inc({ source, result: 'signature_invalid' });
      const orderId = typeof body.order_id === 'string' ? body.order_id.slice(0, 100) : undefined;
      req.log.warn({ security_event: 'webhook_signature_invalid', source, order_id: orderId, ip: req.ip }, 'gateway notification rejected: signature invalid');
    }
    throw err;
  }
}

/** A route that takes a gateway notification body: at most 64 KiB, its strings as sent (the signature covers them). */
function notificationRoute<R extends object>(auth: 'sig' | 'op', summary: string, response: R) {
  return { bodyLimit: 64 * 1024, config: { auth, rawStrings: true }, schema: { tags: [TAGS.webhook], summary, body: NotificationBodySchema, response } };
}

export const webhookRoutes: RoutePlugin<Deps<'clock' | 'gateway' | 'logger' | 'metrics' | 'outbox' | 'settings' | 'store'>> = async (app, services) => {
  app.post(
    '/webhook/midtrans',
    notificationRoute('sig', 'Gateway notification (signature-verified; recorded, applied and queued for the ERP in one transaction)', {
      200: WebhookAnswerSchema,
      ...problems(400, 401, 413, 415, 503),
    }),
    async (req) => webhookAnswer(await asGatewaySees(services, req, req.body, 'webhook', () => handleGatewayNotification(services, req.body, 'webhook'))),
  );

  app.post(
    '/webhook/midtrans/replay',
    notificationRoute('op', 'Re-run a captured notification through the same pipeline (signature still verified)', { 200: ReplayAnswerSchema, ...problems(400, 401, 413, 503) }),
    async (req) => replayAnswer(await asGatewaySees(services, req, req.body, 'replay', () => replayNotification(services, req.body, operatorActor(req)))),
  );
};
