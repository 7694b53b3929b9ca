import { TAGS, type RoutePlugin } from '../../types.js';
import type { Deps } from '../../../types.js';
import { idempotent } from '../../plugins/idempotency.js';
import { apiActor } from '../../plugins/actor.js';
import { IdemHeaders, OrderIdParams } from '../../schemas/common.js';
import { LinkDetailViewSchema, LinkViewSchema, linkDetailView, linkView } from './views.js';
import { cancelLink, createDirectLink, createErpLink, resolveLink } from '../../../domain/orders/links.js';
import { DirectLinkInputSchema, ErpLinkInputSchema } from '../../../domain/orders/schemas.js';
import { problems } from '../../schemas/problems.js';

const createResponses = {
  200: LinkViewSchema,
  201: LinkViewSchema,
  ...problems(400, 401, 409, 422, 502, 503, 504),
};

export const paymentLinkRoutes: RoutePlugin<Deps<'clock' | 'gateway' | 'logger' | 'outbox' | 'settings' | 'store'>> = async (app, services) => {
  app.post(
    '/api/payment-links',
    {
      ...idempotent(services, 'payment-links.create'),
      config: { auth: 'key' },
      schema: {
        tags: [TAGS.links],
        summary: 'Create a payment link (direct shape)',
        description: 'Same order_id and body again → 200 with the same link; a different body → 409 ORDER_CONFLICT.',
        headers: IdemHeaders,
        body: DirectLinkInputSchema,
        response: createResponses,
      },
    },
    async (req, reply) => {
      const { created, tx } = await createDirectLink(services, req.body);
      return reply.code(created ? 201 : 200).send(linkView(tx));
    },
  );

  app.post(
    '/createtransaksi',
    {
      ...idempotent(services, 'createtransaksi'),
      config: { auth: 'key' },
      schema: {
        tags: [TAGS.links],
        summary: 'Create a payment link (ERP shape)',
        description:
          'nominal = Σ price × quantity. An active link for the same mercant_id and items → 200 with it; already paid → 409 ORDER_CONFLICT (current_status); expired, cancelled or failed → a new attempt mercant_id:N+1, 201.',
        headers: IdemHeaders,
        body: ErpLinkInputSchema,
        response: createResponses,
      },
    },
    async (req, reply) => {
      const { created, tx } = await createErpLink(services, req.body);
      return reply.code(created ? 201 : 200).send(linkView(tx));
    },
  );

  app.get(
    '/api/payment-links/:order_id',
    {
      config: { auth: 'key' },
      schema: {
        tags: [TAGS.links],
        summary: 'Resolve a payment link',
        params: OrderIdParams,
        response: { 200: LinkDetailViewSchema, ...problems(401, 404) },
      },
    },
    async (req) => linkDetailView(await resolveLink(services, req.params.order_id)),
  );

  app.delete(
    '/api/payment-links/:order_id',
    {
      config: { auth: 'key' },
      schema: {
        tags: [TAGS.links],
        summary: 'Deactivate a payment link',
        description: 'Deletes the link at the gateway and marks it cancelled; a paid link → 409. Closed links answer as they are.',
        params: OrderIdParams,
        response: { 200: LinkDetailViewSchema, ...problems(401, 404, 409, 502, 503, 504) },
      },
    },
    async (req) => linkDetailView(await cancelLink(services, req.params.order_id, apiActor(req))),
  );
};
