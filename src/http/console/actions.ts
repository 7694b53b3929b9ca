import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { App } from '../types.js';
import { AppError } from '../../errors.js';
import { GatewayError, toAppError } from '../../gateway/errors.js';
import { operatorActor } from '../actor.js';
import { EventId } from '../schemas/common.js';
import { findTransaction } from '../../domain/payment-links.js';
import { paymentStatus } from '../../domain/payments.js';
import { cancelPayment, expirePayment, refundPayment } from '../../domain/payment-actions.js';
import { retryDelivery, retryOrderDeliveries } from '../../domain/deliveries.js';
import type { RefundInput } from '../../domain/inputs.js';
import type { TransactionRecord } from '../../model/payment.js';
import { transactionBody } from './transaction-page.js';
import { txLink } from './transactions.js';
import { consoleDoc, type ConsoleContext } from './context.js';

const ACTIONS = ['check', 'refund', 'cancel', 'expire', 'retry-deliveries'] as const;
type Action = (typeof ACTIONS)[number];

const CsrfField = Type.Optional(Type.String({ maxLength: 200 }));

const ActionBody = Type.Object(
  {
    _csrf: CsrfField,
    amount: Type.Optional(Type.String({ maxLength: 32 })),
    reason: Type.Optional(Type.String({ maxLength: 1000 })),
    // The deliveries page's "Retry all" form: back there afterwards.
    from: Type.Optional(Type.Literal('deliveries')),
  },
  { additionalProperties: false },
);

/** The refund form as the refund action takes it: rupiah may be typed with dots or spaces; empty fields are left out. */
function refundInput(body: { amount?: string; reason?: string }): RefundInput {
  const a = (body.amount ?? '').replace(/[\s.]/g, '');
  if (a !== '' && !/^\d{1,15}$/.test(a)) throw new AppError('AMOUNT_INVALID', 'amount must be a whole number of rupiah, or empty for all that is left.', { errors: [{ path: 'amount', message: 'must be a whole number of rupiah' }] });
  const reason = (body.reason ?? '').trim();
  return { ...(a === '' ? {} : { amount: Number(a) }), ...(reason === '' ? {} : { reason }) };
}

async function run(ctx: ConsoleContext, req: FastifyRequest, action: Action, tx: TransactionRecord, body: { amount?: string; reason?: string }): Promise<void> {
  const actor = operatorActor(req);
  const { services } = ctx;
  switch (action) {
    case 'check':
      await paymentStatus(services, tx.orderId, actor);
      return;
    case 'refund':
      await refundPayment(services, tx.orderId, refundInput(body), actor);
      return;
    case 'cancel':
      await cancelPayment(services, tx.orderId, actor);
      return;
    case 'expire':
      await expirePayment(services, tx.orderId, actor);
      return;
    case 'retry-deliveries':
      await retryOrderDeliveries(services, tx.orderId, actor);
      return;
  }
}

export async function consoleActionRoutes(app: App, ctx: ConsoleContext): Promise<void> {
  const { services } = ctx;
  app.post(
    '/console/transactions/:order_id/:action',
    {
      config: { auth: 'op' },
      preHandler: app.csrfProtection,
      schema: { ...consoleDoc('Console form: act on one payment', 'check (ask the gateway), refund (amount empty = the rest), cancel, expire, or retry-deliveries; needs the form\'s CSRF token; answers 303 to the payment page, or the page with what went wrong.'), params: Type.Object({ order_id: Type.String({ minLength: 1, maxLength: 512 }), action: Type.Union(ACTIONS.map((a) => Type.Literal(a))) }), body: ActionBody },
    },
    async (req, reply) => {
      const tx = await findTransaction(services, req.params.order_id);
      if (!tx) throw new AppError('NOT_FOUND', `No payment ${JSON.stringify(req.params.order_id)}.`);
      try {
        await run(ctx, req, req.params.action, tx, req.body);
      } catch (err) {
        if (!(err instanceof AppError || err instanceof GatewayError)) throw err;
        // The answer is the same page with what went wrong on top, so the operator can correct and retry.
        const e = err instanceof GatewayError ? toAppError(err) : err;
        const fresh = (await findTransaction(services, tx.orderId)) ?? tx;
        const items = [...(e.extras.errors?.map((x) => `${x.path}: ${x.message}`) ?? []), ...(e.extras.gateway ? [`gateway ${e.extras.gateway.status_code}: ${e.extras.gateway.status_message}`] : [])];
        return ctx.render(reply, req, {
          title: `Payment ${fresh.orderId}`,
          section: 'transactions',
          status: e.status,
          alert: { kind: 'error', text: `${e.message} (${e.code})`, items },
          body: await transactionBody(services, fresh, ctx.timeZone, ctx.csrfToken(req, reply)),
        });
      }
      const back = req.body.from === 'deliveries' ? '/console/deliveries' : txLink(tx.orderId);
      return reply.redirect(`${back}?done=${req.params.action}`, 303);
    },
  );

  app.post(
    '/console/deliveries/:event_id/retry',
    {
      config: { auth: 'op' },
      preHandler: app.csrfProtection,
      schema: { ...consoleDoc('Console form: retry one ERP delivery', 'Needs the form\'s CSRF token; answers 303 to the deliveries page.'), params: Type.Object({ event_id: EventId }), body: Type.Object({ _csrf: CsrfField }, { additionalProperties: false }) },
    },
    async (req, reply) => {
      await retryDelivery(services, req.params.event_id, operatorActor(req));
      return reply.redirect('/console/deliveries?done=retry', 303);
    },
  );
}
