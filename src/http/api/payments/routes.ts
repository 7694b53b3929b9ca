import { TAGS, type RoutePlugin } from '../../types.js';
import { orderFieldProblems } from '../../../domain/orders/problems.js';
import type { Deps } from '../../../types.js';
import { idempotent } from '../../plugins/idempotency.js';
import { apiActor, requestAccount } from '../../plugins/actor.js';
import { inAccount } from '../../../domain/accounts/scope.js';

import { IdemHeaders, OrderIdParams } from '../../schemas/common.js';
import { withExample } from '../../schemas/examples.js';
import {
  ChargeViewSchema,
  STATUS_EXAMPLE,
  SnapViewSchema,
  StatusViewSchema,
  chargeView,
  snapView,
  statusView,
} from './views.js';
import { createCharge, createSnapToken, paymentStatus } from '../../../domain/orders/charges.js';
import { ChargeInputSchema, SnapInputSchema } from '../../../domain/orders/schemas.js';
import { problems } from '../../schemas/problems.js';

const errors = problems(400, 401, 409, 422, 502, 503, 504);

const charge = withExample(ChargeViewSchema, {
  order_id: 'PO/5:1',
  gateway_order_id: 'PO.5.1',
  transaction_id: 'be4f3e44-d6ee-4355-8c64-c1d1dc7f4590',
  status: 'pending',
  transaction_status: 'pending',
  payment_type: 'bank_transfer',
  va_numbers: [{ bank: 'bca', va_number: '12345678901' }],
  expiry_time: '2026-11-23 10:00:00',
});
const snap = withExample(SnapViewSchema, {
  order_id: 'SNAP-1',
  gateway_order_id: 'SNAP-1',
  token: '66e4fa55-fdac-4ef9-91b5-733b97d1b862',
  redirect_url: 'https://app.midtrans.com/snap/v4/redirection/66e4fa55-fdac-4ef9-91b5-733b97d1b862',
});

export const paymentRoutes: RoutePlugin<
  Deps<'clock' | 'gateway' | 'gateways' | 'logger' | 'metrics' | 'outbox' | 'runtimeConfig' | 'store'>
> = async (app, services) => {
  app.post(
    '/api/charge',
    {
      ...idempotent(services, 'charge'),
      config: { auth: 'key', fieldChecks: orderFieldProblems },
      schema: {
        tags: [TAGS.ops],
        summary: 'Charge through the Core API',
        description:
          'payment_type plus its method object. Same order_id and body again → 200 with the stored answer; a different body → 409.',
        headers: IdemHeaders,
        body: withExample(ChargeInputSchema, {
          order_id: 'PO/5:1',
          nominal: 125000,
          payment_type: 'bank_transfer',
          bank_transfer: { bank: 'bca' },
          customer: { first_name: 'Rina', email: 'rina@example.com' },
        }),
        response: { 200: charge, 201: charge, ...errors },
      },
    },
    async (req, reply) => {
      const { created, tx, answer } = await createCharge(inAccount(services, requestAccount(req)), req.body);
      return reply.code(created ? 201 : 200).send(chargeView(tx, answer));
    },
  );

  app.post(
    '/api/snap/token',
    {
      ...idempotent(services, 'snap'),
      config: { auth: 'key', fieldChecks: orderFieldProblems },
      schema: {
        tags: [TAGS.ops],
        summary: 'Create a payment-page (Snap) token',
        description:
          "A token for the gateway's payment page (Snap), where the customer picks a method. Same order_id and body again → 200 with the same token; a different body → 409. Input errors are 400 before the gateway is asked.",
        headers: IdemHeaders,
        body: withExample(SnapInputSchema, {
          order_id: 'SNAP-1',
          nominal: 99000,
          enabled_payments: ['other_qris', 'bca_va'],
        }),
        response: { 200: snap, 201: snap, ...errors },
      },
    },
    async (req, reply) => {
      const { created, tx } = await createSnapToken(inAccount(services, requestAccount(req)), req.body);
      return reply.code(created ? 201 : 200).send(snapView(tx));
    },
  );

  app.get(
    '/api/payments/:order_id/status',
    {
      config: { auth: 'key' },
      schema: {
        tags: [TAGS.ops],
        summary:
          'Ask the gateway, update the local record, return the status (by order_id, gateway_order_id or the gateway transaction_id)',
        description:
          'Asks the gateway now (a payment link through its newest purchase), feeds the answer through the same status machine as notifications — so a change found this way reaches the ERP too, once — and answers the stored payment.',
        params: OrderIdParams,
        response: {
          200: withExample(StatusViewSchema, {
            ...STATUS_EXAMPLE,
            status: 'paid',
            transaction_status: 'settlement',
            refunded_amount: 0,
          }),
          ...problems(401, 404, 502, 503, 504),
        },
      },
    },
    async (req) =>
      statusView(await paymentStatus(inAccount(services, requestAccount(req)), req.params.order_id, apiActor(req))),
  );
};
