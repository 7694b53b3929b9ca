import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { App } from '../types.js';
import { AppError } from '../../errors.js';
import { GatewayError, toAppError } from '../../gateway/errors.js';
import { operatorActor } from '../actor.js';
import { EventId } from '../schemas/common.js';
import { findTransaction } from '../../domain/payment-links.js';
import { paymentStatus } from '../../domain/payments.js';
import { availableActions, cancelPayment, expirePayment, refundAmount, refundPayment } from '../../domain/payment-actions.js';
import { retryDelivery, retryOrderDeliveries } from '../../domain/deliveries.js';
import type { RefundInput } from '../../domain/inputs.js';
import type { TransactionRecord } from '../../model/payment.js';
import { transactionBody } from './transaction-page.js';
import { txLink } from './transactions.js';
import { consoleDoc, errorAlert, type ConsoleContext } from './context.js';
import { html, rupiah, type Html } from './html.js';
import type { Alert } from './layout.js';
import type { View } from './view.js';

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
    // A money action acts only once confirmed: the confirmation page's form carries confirm=1.
    confirm: Type.Optional(Type.Literal('1')),
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

/** Actions that move money or end a payment: each is confirmed on a page of its own first. */
const CONFIRMED = ['refund', 'cancel', 'expire'] as const;
type ConfirmedAction = (typeof CONFIRMED)[number];
const needsConfirmation = (a: Action): a is ConfirmedAction => (CONFIRMED as readonly string[]).includes(a);

/** Why the console does not offer this action for the payment as it is, if it does not. */
function notOffered(v: View, action: ConfirmedAction, tx: TransactionRecord, confirmed: boolean): string | undefined {
  const offer = availableActions(tx);
  if (action === 'refund' && !offer.refund.ok && offer.refund.why === 'method') return v.t('pay_refund_method', { method: tx.paymentType ?? '' });
  // Once confirmed, the domain action judges the state (its refusal names the payment's state).
  if (confirmed) return undefined;
  const ok = action === 'refund' ? offer.refund.ok : offer[action];
  return ok ? undefined : v.t('cf_not_possible', { action: v.t(`cf_${action}_action`), status: v.word('st', tx.status) });
}

/**
 * The confirmation of a money action: what will happen to which order and how much, a Confirm
 * button (a plain form carrying the same values and confirm=1; no script) and a way back.
 */
function confirmationBody(v: View, tx: TransactionRecord, action: ConfirmedAction, input: RefundInput, token: string): Html {
  const { t } = v;
  const left = tx.nominal - tx.refundedAmount;
  const amount = action !== 'refund' ? rupiah(tx.nominal) : input.amount === undefined ? t('cf_everything_left', { amount: rupiah(left) }) : rupiah(input.amount);
  // The page's heading names the action; this section is all the page is about.
  return html`<section class="confirm" data-confirm="${action}">
<dl class="kv">
<dt>${t('cf_order')}</dt><dd class="mono">${tx.orderId}</dd>
<dt>${t('cf_amount')}</dt><dd data-confirm-amount>${amount}</dd>
${input.reason ? html`<dt>${t('cf_reason')}</dt><dd>${input.reason}</dd>` : ''}
</dl>
<p>${t(`cf_${action}_consequence`)}</p>
<form method="post" action="${txLink(tx.orderId)}/${action}">
<input type="hidden" name="_csrf" value="${token}">
${input.amount !== undefined ? html`<input type="hidden" name="amount" value="${String(input.amount)}">` : ''}
${input.reason ? html`<input type="hidden" name="reason" value="${input.reason}">` : ''}
<input type="hidden" name="confirm" value="1">
<button type="submit" class="danger">${t(`cf_confirm_${action}`)}</button>
<a href="${txLink(tx.orderId)}">${t('cf_back')}</a>
</form>
</section>`;
}

export async function consoleActionRoutes(app: App, ctx: ConsoleContext): Promise<void> {
  const { services } = ctx;
  app.post(
    '/console/transactions/:order_id/:action',
    {
      config: { auth: 'op' },
      preHandler: app.csrfProtection,
      schema: { ...consoleDoc('Console form: act on one payment', 'check (ask the gateway), refund (amount empty = the rest), cancel, expire, or retry-deliveries; needs the form\'s CSRF token. Refund, cancel and expire first answer a confirmation page; only the confirmed form (confirm=1) acts. Answers 303 to the payment page, or the page with what went wrong.'), params: Type.Object({ order_id: Type.String({ minLength: 1, maxLength: 512 }), action: Type.Union(ACTIONS.map((a) => Type.Literal(a))) }), body: ActionBody },
    },
    async (req, reply) => {
      const tx = await findTransaction(services, req.params.order_id);
      if (!tx) throw new AppError('NOT_FOUND', `No payment ${JSON.stringify(req.params.order_id)}.`);
      const v = ctx.view(req, reply);
      const action = req.params.action;
      const here = txLink(tx.orderId);
      const showPayment = async (status: number, alert: Alert) =>
        ctx.render(reply, req, { title: v.t('title_payment', { order: tx.orderId }), section: 'transactions', status, alert, here, body: await transactionBody(services, (await findTransaction(services, tx.orderId)) ?? tx, v, ctx.csrfToken(req, reply)) });
      try {
        if (needsConfirmation(action)) {
          const confirmed = req.body.confirm === '1';
          const refused = notOffered(v, action, tx, confirmed);
          if (refused) return await showPayment(409, { kind: 'error', text: refused });
          if (!confirmed) {
            const input = action === 'refund' ? refundInput(req.body) : {};
            // A wrong amount is said before the confirmation, not after it.
            if (action === 'refund') refundAmount(input, tx.nominal, tx.nominal - tx.refundedAmount);
            return ctx.render(reply, req, { title: v.t('title_confirm', { action: v.t(`cf_${action}_action`) }), section: 'transactions', here, body: confirmationBody(v, tx, action, input, ctx.csrfToken(req, reply)) });
          }
        }
        await run(ctx, req, action, tx, req.body);
      } catch (err) {
        if (!(err instanceof AppError || err instanceof GatewayError)) throw err;
        // The answer is the same page with what went wrong on top, so the operator can correct and retry.
        const e = err instanceof GatewayError ? toAppError(err) : err;
        return showPayment(e.status, errorAlert(v, e, req.id));
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
