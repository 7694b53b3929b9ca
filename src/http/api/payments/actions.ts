import { TAGS, type RoutePlugin } from '../../types.js';
import type { Deps } from '../../../types.js';
import { idempotent, requestKeyOf } from '../../plugins/idempotency.js';
import { apiActor, requestAccount } from '../../plugins/actor.js';
import { inAccount } from '../../../domain/accounts/scope.js';

import { IdemHeaders, OrderIdParams } from '../../schemas/common.js';
import { withExample } from '../../schemas/examples.js';
import { STATUS_EXAMPLE, StatusViewSchema, statusView } from './views.js';
import { refundPayment } from '../../../domain/actions/refund.js';
import { cancelPayment, expirePayment } from '../../../domain/actions/close.js';
import { RefundInputSchema } from '../../../domain/orders/schemas.js';
import { problems } from '../../schemas/problems.js';
const errors = problems(400, 401, 404, 409, 422, 502, 503, 504);

const STATE_RULES =
  'The local status moves only when the gateway confirms (its answer, its status API or its notification), and the ERP gets a `payment.status_changed` event for it through the outbox. ' +
  'A payment link acts on its newest purchase.';

export const paymentActionRoutes: RoutePlugin<
  Deps<'clock' | 'gateway' | 'gateways' | 'logger' | 'metrics' | 'outbox' | 'store'>
> = async (app, services) => {
  app.post(
    '/api/payments/:order_id/refund',
    {
      ...idempotent(services, 'refund'),
      // No body at all means "refund the rest", like an empty object.
      preValidation: async (req) => {
        req.body ??= {};
      },
      config: { auth: 'key' },
      schema: {
        tags: [TAGS.ops],
        summary: 'Refund a paid payment, all of it or a part',
        description:
          'Without `amount`, refunds what is left. Allowed while the payment is `paid` or `partially_refunded`; otherwise 409 (`PAYMENT_NOT_PAID`, `PAYMENT_CLOSED`) with `payment_status` naming its state. A card payment captured but not settled yet is 409 `PAYMENT_NOT_SETTLED` (the gateway refunds only settled payments; cancel voids it until then). ' +
          'An amount ≤ 0 or above what is left is 400 `AMOUNT_INVALID`. One refund at a time per payment: a request arriving while another is at the gateway waits for it (up to 15 s, then 409 `REFUND_IN_PROGRESS`). ' +
          'Each request keeps its own gateway `refund_key`. Send an `Idempotency-Key`: a request retried with the same key after a timeout is the same refund again (the gateway never refunds twice); a request without one, or with a new one, is a new refund. ' +
          "A refund whose answer was lost is settled from the gateway's list of refunds before the next one is accepted. " +
          'The answer is the payment after the gateway confirmed it, with the cumulative `refunded_amount`; the ERP receives `partially_refunded` or `refunded`. ' +
          STATE_RULES,
        params: OrderIdParams,
        headers: IdemHeaders,
        body: withExample(RefundInputSchema, { amount: 50000, reason: 'One item returned' }),
        response: { 200: withExample(StatusViewSchema, STATUS_EXAMPLE), ...errors },
      },
    },
    async (req) =>
      statusView(
        await refundPayment(
          inAccount(services, requestAccount(req)),
          req.params.order_id,
          { ...req.body, requestKey: requestKeyOf(req) },
          apiActor(req),
        ),
      ),
  );

  app.post(
    '/api/payments/:order_id/cancel',
    {
      ...idempotent(services, 'cancel'),
      config: { auth: 'key' },
      schema: {
        tags: [TAGS.ops],
        summary: 'Cancel a payment that has not settled',
        description:
          'For a pending or challenged payment, or a captured card payment before it settles. A settled payment answers 409 `PAYMENT_SETTLED` (refund it instead); a failed or expired one 409 `PAYMENT_CLOSED`. ' +
          'Cancelling a cancelled payment answers 200 with it unchanged. A payment link nobody has bought yet is deactivated. ' +
          STATE_RULES,
        params: OrderIdParams,
        headers: IdemHeaders,
        response: {
          200: withExample(StatusViewSchema, {
            ...STATUS_EXAMPLE,
            status: 'cancelled',
            transaction_status: 'cancel',
            refunded_amount: 0,
            settlement_time: null,
          }),
          ...errors,
        },
      },
    },
    async (req) =>
      statusView(await cancelPayment(inAccount(services, requestAccount(req)), req.params.order_id, apiActor(req))),
  );

  app.post(
    '/api/payments/:order_id/expire',
    {
      ...idempotent(services, 'expire'),
      config: { auth: 'key' },
      schema: {
        tags: [TAGS.ops],
        summary: 'Expire a pending payment now',
        description:
          'The customer can no longer pay it. A settled payment answers 409 `PAYMENT_SETTLED`; a failed or cancelled one 409 `PAYMENT_CLOSED`; expiring an expired payment answers 200 with it unchanged. ' +
          STATE_RULES,
        params: OrderIdParams,
        headers: IdemHeaders,
        response: {
          200: withExample(StatusViewSchema, {
            ...STATUS_EXAMPLE,
            status: 'expired',
            transaction_status: 'expire',
            refunded_amount: 0,
            settlement_time: null,
          }),
          ...errors,
        },
      },
    },
    async (req) =>
      statusView(await expirePayment(inAccount(services, requestAccount(req)), req.params.order_id, apiActor(req))),
  );
};
