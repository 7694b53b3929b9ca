/**
 * The BI-SNAP notification paths: the merchant registers
 * `PUBLIC_BASE_URL/webhook/snap-bi` (or `…/webhook/snap-bi/{account}`) as the notification base URL
 * and the gateway appends each product's path. Bodies are read as bytes: the signature covers
 * exactly what arrived.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { TAGS, type RoutePlugin } from '../../types.js';
import type { Deps } from '../../../types.js';
import { problems } from '../../schemas/problems.js';
import { withExample } from '../../schemas/examples.js';
import { AccountIdSchema, notifiedAccount } from '../../../domain/accounts/accounts.js';
import { inAccount } from '../../../domain/accounts/scope.js';
import {
  SNAP_BI_NOTIFY_PATHS,
  ingestSnapBiNotification,
  type SnapBiNotifyPath,
} from '../../../domain/reports/snap-bi-notification.js';

const raws = new WeakMap<FastifyRequest, Buffer>();

const AnswerSchema = Type.Object({
  responseCode: Type.String({ description: 'e.g. `2005600`: HTTP status + service code + case code' }),
  responseMessage: Type.String(),
  virtualAccountData: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});

const header = (req: FastifyRequest, name: string): string | undefined => {
  const v = req.headers[name];
  return typeof v === 'string' ? v : undefined;
};

function route(path: SnapBiNotifyPath, withAccount: boolean) {
  return {
    bodyLimit: 64 * 1024,
    config: { auth: 'sig' as const },
    schema: {
      tags: [TAGS.webhook],
      summary: `BI-SNAP notification ${path}${withAccount ? " (an account's)" : ''}`,
      description: `The gateway's BI-SNAP notification for ${path}: the RSA \`X-SIGNATURE\` is verified with \`gateway.snap_bi.public_key\` over \`POST:${path}:sha256(body as received):X-TIMESTAMP\` (one byte changed → 401, nothing written), then the order is confirmed with the status API and applied like a legacy notification (same ERP event). Answers the gateway's success body with code \`200${SNAP_BI_NOTIFY_PATHS[path]}00\`.`,
      ...(withAccount ? { params: Type.Object({ account: AccountIdSchema }, { additionalProperties: false }) } : {}),
      response: {
        200: withExample(AnswerSchema, {
          responseCode: `200${SNAP_BI_NOTIFY_PATHS[path]}00`,
          responseMessage: 'Successful',
        }),
        ...problems(400, 401, 404, 413, 415, 503),
      },
    },
  };
}

export const snapBiWebhookRoutes: RoutePlugin<
  Deps<'clock' | 'gateway' | 'gateways' | 'logger' | 'metrics' | 'outbox' | 'runtimeConfig' | 'store'>
> = async (app: FastifyInstance, services) => {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body, done) => {
    const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    raws.set(req, bytes);
    done(null, {});
  });
  const notification = (req: FastifyRequest, path: SnapBiNotifyPath) => ({
    path,
    rawBody: raws.get(req) ?? Buffer.alloc(0),
    timestamp: header(req, 'x-timestamp'),
    signature: header(req, 'x-signature'),
  });
  for (const path of Object.keys(SNAP_BI_NOTIFY_PATHS) as SnapBiNotifyPath[]) {
    app.post(`/webhook/snap-bi${path}`, route(path, false), async (req) =>
      ingestSnapBiNotification(services, notification(req, path)),
    );
    app.post<{ Params: { account: string } }>(`/webhook/snap-bi/:account${path}`, route(path, true), async (req) =>
      ingestSnapBiNotification(
        inAccount(services, await notifiedAccount(services, req.params.account)),
        notification(req, path),
      ),
    );
  }
};
