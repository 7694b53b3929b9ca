import type { Static } from 'typebox';
import { orderFieldProblems } from '../../../domain/orders/problems.js';
import { TAGS, type RoutePlugin } from '../../types.js';
import type { Deps } from '../../../types.js';
import { idempotent } from '../../plugins/idempotency.js';
import { apiActor, requestAccount } from '../../plugins/actor.js';
import { inAccount } from '../../../domain/accounts/scope.js';

import { IdemHeaders, OrderIdParams } from '../../schemas/common.js';
import { withExample } from '../../schemas/examples.js';
import {
  LINK_DETAIL_EXAMPLE,
  LINK_EXAMPLE,
  LinkDetailViewSchema,
  LinkViewSchema,
  linkDetailView,
  linkView,
} from './views.js';
import { cancelLink, createDirectLink, createErpLink, resolveLinkWithPurchases } from '../../../domain/orders/links.js';
import { DirectLinkInputSchema, ErpLinkInputSchema } from '../../../domain/orders/schemas.js';
import { problems } from '../../schemas/problems.js';

/** A creation's answers: 201 with the new link, 200 with the link an earlier request made; both show `example`. */
function createResponses(example: Static<typeof LinkViewSchema>) {
  const link = withExample(LinkViewSchema, example);
  return { 200: link, 201: link, ...problems(400, 401, 409, 422, 502, 503, 504) };
}

export const paymentLinkRoutes: RoutePlugin<
  Deps<'clock' | 'gateway' | 'gateways' | 'logger' | 'outbox' | 'runtimeConfig' | 'store'>
> = async (app, services) => {
  app.post(
    '/api/payment-links',
    {
      ...idempotent(services, 'payment-links.create'),
      config: { auth: 'key', fieldChecks: orderFieldProblems },
      schema: {
        tags: [TAGS.links],
        summary: 'Create a payment link (direct shape)',
        headers: IdemHeaders,
        body: withExample(DirectLinkInputSchema, {
          order_id: 'SO-77:3',
          nominal: 150000,
          customer: { first_name: 'Rina', last_name: 'Wijaya', email: 'rina@example.com', phone: '+628123456789' },
          expire_at: '2026-12-01T10:00:00+07:00',
        }),
        description:
          'Same order_id and body again → 200 with the same link; a different body → 409 ORDER_CONFLICT. usage_limit > 1 makes a link used more than once: each purchase is a payment of its own (order_id = the link\'s, a "-" and the gateway\'s suffix) whose ERP events carry payment_link_order_id.',
        response: createResponses({
          ...LINK_EXAMPLE,
          order_id: 'SO-77:3',
          gateway_order_id: 'SO-77.3',
          mercant_id: 'SO-77',
        }),
      },
    },
    async (req, reply) => {
      const { created, tx } = await createDirectLink(inAccount(services, requestAccount(req)), req.body);
      return reply.code(created ? 201 : 200).send(linkView(tx));
    },
  );

  app.post(
    '/createtransaksi',
    {
      ...idempotent(services, 'createtransaksi'),
      config: { auth: 'key', fieldChecks: orderFieldProblems },
      schema: {
        tags: [TAGS.links],
        summary: 'Create a payment link (ERP shape)',
        description:
          'nominal = Σ price × quantity. An active link for the same mercant_id and items → 200 with it; already paid → 409 ORDER_CONFLICT (current_status); expired, cancelled or failed → a new attempt mercant_id:N+1, 201.',
        headers: IdemHeaders,
        body: withExample(ErpLinkInputSchema, {
          mercant_id: 'INV/2026/0042',
          item: [{ id: 'SKU-1', name: 'Kopi Gayo 250 g', price: 75000, quantity: 2 }],
          customer: { first_name: 'Rina', email: 'rina@example.com' },
        }),
        response: createResponses(LINK_EXAMPLE),
      },
    },
    async (req, reply) => {
      const { created, tx } = await createErpLink(inAccount(services, requestAccount(req)), req.body);
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
        description:
          'By the original order_id (URL-encoded, e.g. `INV%2F2026%2F0042%3A1`), the gateway_order_id or the gateway transaction_id. Answers the link as stored, with its current status; 404 when unknown. A link used more than once (usage_limit > 1) stays pending while it takes purchases and lists them under purchases.',
        params: OrderIdParams,
        response: { 200: withExample(LinkDetailViewSchema, LINK_DETAIL_EXAMPLE), ...problems(401, 404) },
      },
    },
    async (req) => {
      const { link, purchases } = await resolveLinkWithPurchases(
        inAccount(services, requestAccount(req)),
        req.params.order_id,
      );
      return linkDetailView(link, purchases);
    },
  );

  app.delete(
    '/api/payment-links/:order_id',
    {
      config: { auth: 'key' },
      schema: {
        tags: [TAGS.links],
        summary: 'Deactivate a payment link',
        description:
          'Deletes the link at the gateway and marks it cancelled; a paid link → 409. Closed links answer as they are.',
        params: OrderIdParams,
        response: {
          200: withExample(LinkDetailViewSchema, {
            ...LINK_DETAIL_EXAMPLE,
            status: 'cancelled',
            transaction_status: null,
            payment_type: null,
            transaction_id: null,
            settlement_time: null,
          }),
          ...problems(401, 404, 409, 502, 503, 504),
        },
      },
    },
    async (req) =>
      linkDetailView(await cancelLink(inAccount(services, requestAccount(req)), req.params.order_id, apiActor(req))),
  );
};
