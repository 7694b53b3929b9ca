import { DEFAULT_ACCOUNT, accountLabel } from '../../../model/account.js';
import type { FastifyRequest } from 'fastify';
import type { Static } from 'typebox';
import { TAGS, type RoutePlugin } from '../../types.js';
import type { Deps } from '../../../types.js';
import { AppError } from '../../../platform/errors.js';
import { operatorActor } from '../../plugins/actor.js';
import { ReplayAnswerSchema, WebhookAnswerSchema, replayAnswer, webhookAnswer } from './views.js';
import { ingestNotification, replayNotification, type NotificationOutcome } from '../../../domain/reports/ingest.js';
import { NotificationBodySchema } from '../../../gateway/report.js';
import { problems } from '../../schemas/problems.js';
import { AccountIdSchema, notifiedAccount } from '../../../domain/accounts/accounts.js';
import { inAccount } from '../../../domain/accounts/scope.js';
import { Type } from 'typebox';
import { withExample } from '../../schemas/examples.js';

/**
 * A notification refused for its signature is counted and logged as a security event, with the
 * client's address. Every error is then answered by the error mapper, which makes a database that
 * is down a 503: the gateway retries a 503 four times but a 500 only once.
 */
async function asGatewaySees(
  services: Deps<'metrics'>,
  req: FastifyRequest,
  body: Record<string, unknown>,
  source: 'webhook' | 'replay',
  run: () => Promise<NotificationOutcome>,
): Promise<NotificationOutcome> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof AppError && err.code === 'SIGNATURE_INVALID') {
      const account = (req.params as { account?: string }).account ?? DEFAULT_ACCOUNT;
      services.metrics.notifications.inc({ source, result: 'signature_invalid', ...accountLabel(account) });
      const orderId = typeof body.order_id === 'string' ? body.order_id.slice(0, 100) : undefined;
      req.log.warn(
        { security_event: 'webhook_signature_invalid', source, order_id: orderId, ip: req.ip },
        'gateway notification rejected: signature invalid',
      );
    }
    throw err;
  }
}

/** A route that takes a gateway notification body: at most 64 KiB, its strings as sent (the signature covers them). */
function notificationRoute<R extends object>(
  auth: 'sig' | 'op',
  doc: {
    summary: string;
    description: string;
    example: Static<typeof NotificationBodySchema> & Record<string, unknown>;
  },
  response: R,
) {
  const { summary, description, example } = doc;
  return {
    bodyLimit: 64 * 1024,
    config: { auth, rawStrings: true },
    schema: {
      tags: [TAGS.webhook],
      summary,
      description,
      body: withExample(NotificationBodySchema, example),
      response,
    },
  };
}

/** A route's options with its path parameters' schema. */
function withParams<O extends { schema: object }, P>(route: O, params: P): O & { schema: O['schema'] & { params: P } } {
  return { ...route, schema: { ...route.schema, params } };
}

export const webhookRoutes: RoutePlugin<
  Deps<'clock' | 'gateway' | 'gateways' | 'logger' | 'metrics' | 'outbox' | 'runtimeConfig' | 'store'>
> = async (app, services) => {
  app.post(
    '/webhook/midtrans',
    notificationRoute(
      'sig',
      {
        summary:
          'Gateway notification (signature-verified; recorded, applied and queued for the ERP in one transaction)',
        description:
          "Where the gateway sends its HTTP notifications (configure `PUBLIC_BASE_URL/webhook/midtrans` in the gateway dashboard). The SHA-512 `signature_key` is verified, the status is confirmed with the gateway's status API, and the report is recorded, applied and turned into an ERP event in one database transaction before the 200. A bad signature is 401; a database outage 503 (the gateway retries).",
        example: {
          transaction_time: '2026-11-22 10:00:00',
          transaction_status: 'settlement',
          transaction_id: '4da06f05-2348-40c5-8ca4-51343995284b',
          status_code: '200',
          signature_key: '…sha512(order_id + status_code + gross_amount + server_key)…',
          payment_type: 'qris',
          order_id: 'INV.2026.0042.1-1795460839321',
          gross_amount: '150000.00',
          fraud_status: 'accept',
          currency: 'IDR',
        },
      },
      {
        200: withExample(WebhookAnswerSchema, { status: 'ok', result: 'applied' }),
        ...problems(400, 401, 413, 415, 503),
      },
    ),
    async (req) =>
      webhookAnswer(
        await asGatewaySees(services, req, req.body, 'webhook', () =>
          ingestNotification(services, req.body, 'webhook'),
        ),
      ),
  );

  app.post(
    '/webhook/midtrans/:account',
    withParams(
      notificationRoute(
        'sig',
        {
          summary: "An account's gateway notification (verified with that account's server key only)",
          description:
            "The notification URL of the account `{account}` (paylink sends it as `X-Override-Notification` on each create call of that account). Verified with that account's server key only; when the account has a `merchant_id`, a body naming another is refused like a bad signature (401). An unknown account → 404, a disabled one → 401; nothing is written then. Otherwise as `/webhook/midtrans`.",
          example: {
            transaction_status: 'settlement',
            transaction_id: '4da06f05-2348-40c5-8ca4-51343995284b',
            status_code: '200',
            signature_key: '…sha512(order_id + status_code + gross_amount + server_key)…',
            order_id: 'INV.2026.0042.1',
            gross_amount: '150000.00',
            merchant_id: 'G123456789',
          },
        },
        {
          200: withExample(WebhookAnswerSchema, { status: 'ok', result: 'applied' }),
          ...problems(400, 401, 404, 413, 415, 503),
        },
      ),
      Type.Object({ account: AccountIdSchema }, { additionalProperties: false }),
    ),
    async (req) =>
      webhookAnswer(
        await asGatewaySees(services, req, req.body, 'webhook', async () =>
          ingestNotification(
            inAccount(services, await notifiedAccount(services, req.params.account)),
            req.body,
            'webhook',
          ),
        ),
      ),
  );

  app.post(
    '/webhook/midtrans/replay',
    notificationRoute(
      'op',
      {
        summary: 'Re-run a captured notification through the same pipeline (signature still verified)',
        description:
          'For operators: runs a captured notification body (from the log or the gateway dashboard) through exactly the same pipeline as the webhook. Duplicates are recognised, so replaying is always safe.',
        example: {
          transaction_status: 'settlement',
          transaction_id: '4da06f05-2348-40c5-8ca4-51343995284b',
          status_code: '200',
          signature_key: '…as received…',
          order_id: 'INV.2026.0042.1-1795460839321',
          gross_amount: '150000.00',
          payment_type: 'qris',
        },
      },
      {
        200: withExample(ReplayAnswerSchema, {
          result: 'duplicate',
          confirmed: false,
          order_id: 'INV/2026/0042:1',
          status: 'paid',
        }),
        ...problems(400, 401, 403, 413, 503),
      },
    ),
    async (req) =>
      replayAnswer(
        await asGatewaySees(services, req, req.body, 'replay', () =>
          replayNotification(services, req.body, operatorActor(req)),
        ),
      ),
  );
};
