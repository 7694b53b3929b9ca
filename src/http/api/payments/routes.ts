import { TAGS, type RoutePlugin } from '../../types.js';
import type { Deps } from '../../../types.js';
import { idempotent } from '../../plugins/idempotency.js';
import { apiActor } from '../../plugins/actor.js';
import { IdemHeaders, OrderIdParams } from '../../schemas/common.js';
import { ChargeViewSchema, SnapViewSchema, StatusViewSchema, chargeView, snapView, statusView } from './views.js';
import { createCharge, createSnapToken, paymentStatus } from '../../../domain/orders/charges.js';
import { ChargeInputSchema, SnapInputSchema } from '../../../domain/orders/schemas.js';
import { problems } from '../../schemas/problems.js';

const errors = problems(400, 401, 409, 422, 502, 503, 504);

export const paymentRoutes: RoutePlugin<Deps<'clock' | 'gateway' | 'logger' | 'metrics' | 'outbox' | 'settings' | 'store'>> = async (app, services) => {
  app.post(
    '/api/charge',
    {
      ...idempotent(services, 'charge'),
      config: { auth: 'key' },
      schema: {
        tags: [TAGS.ops],
        summary: 'Charge through the Core API',
        description: 'payment_type plus its method object. Same order_id and body again → 200 with the stored answer; a different body → 409.',
        headers: IdemHeaders,
        body: ChargeInputSchema,
        response: { 200: ChargeViewSchema, 201: ChargeViewSchema, ...errors },
      },
    },
    async (req, reply) => {
      const { created, tx, answer } = await createCharge(services, req.body);
      return reply.code(created ? 201 : 200).send(chargeView(tx, answer));
    },
  );

  app.post(
    '/api/snap/token',
    {
      ...idempotent(services, 'snap'),
      config: { auth: 'key' },
      schema: {
        tags: [TAGS.ops],
        summary: 'Create a payment-page (Snap) token',
        headers: IdemHeaders,
        body: SnapInputSchema,
        response: { 200: SnapViewSchema, 201: SnapViewSchema, ...errors },
      },
    },
    async (req, reply) => {
      const { created, tx } = await createSnapToken(services, req.body);
      return reply.code(created ? 201 : 200).send(snapView(tx));
    },
  );

  app.get(
    '/api/payments/:order_id/status',
    {
      config: { auth: 'key' },
      schema: {
        tags: [TAGS.ops],
        summary: 'Ask the gateway, update the local record, return the status (by order_id, gateway_order_id or the gateway transaction_id)',
        params: OrderIdParams,
        response: { 200: StatusViewSchema, ...problems(401, 404, 502, 503, 504) },
      },
    },
    async (req) => statusView(await paymentStatus(services, req.params.order_id, apiActor(req))),
  );
};
