import { Type } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RoutePlugin } from '../types.js';
import type { Deps } from '../../types.js';
import { AppError } from '../../platform/errors.js';
import { knownProblem } from '../plugins/errors.js';
import { operatorActor } from '../plugins/actor.js';
import { EventId } from '../schemas/common.js';
import { findTransaction } from '../../domain/orders/links.js';
import { paymentStatus } from '../../domain/orders/charges.js';
import { availableActions, refundAmount, refundPayment } from '../../domain/actions/refund.js';
import { cancelPayment, expirePayment } from '../../domain/actions/close.js';
import { findDelivery, retryDelivery, retryOrderDeliveries } from '../../domain/erp-events/deliveries.js';
import { replayDeliveries } from '../../domain/erp-events/replay.js';
import { deliveriesBody } from './deliveries.js';
import type { RefundInput } from '../../domain/orders/schemas.js';
import { readRupiahText } from '../../domain/orders/input.js';
import type { TransactionRecord } from '../../model/payment.js';
import { methodInSentence, transactionBody } from './transaction-page.js';
import { txActionLink, txLink } from './transactions.js';
import { AccountQuery, paymentSubject, switchableAccounts, withParam } from './accounts.js';
import { inAccount } from '../../domain/accounts/scope.js';
import { DEFAULT_ACCOUNT } from '../../model/account.js';
import {
  consoleDoc,
  errorAlert,
  operatorBinding,
  type ConsoleContext,
  type FormRequest,
  type FormTokens,
} from './context.js';
import { FormKeyField, actOnce, formKeyField, formRequest, type FormKeyDeps } from './form-keys.js';
import { consoleContext } from './scope.js';
import { html, rupiah, type Html } from './html.js';
import type { Alert } from './layout.js';
import type { View } from './view.js';

/** What the actions and the payment page shown after them use. */
type ActionDeps = Deps<
  'clock' | 'config' | 'gateway' | 'gateways' | 'logger' | 'metrics' | 'outbox' | 'runtimeConfig' | 'store'
> &
  FormKeyDeps;

const ACTIONS = ['check', 'refund', 'cancel', 'expire', 'retry-deliveries'] as const;
type Action = (typeof ACTIONS)[number];

const CsrfField = Type.Optional(Type.String({ maxLength: 200 }));

const ActionBody = Type.Object(
  {
    _csrf: CsrfField,
    // The one-time key of a form that acts (a confirmed money action, a delivery retry).
    _key: FormKeyField,
    amount: Type.Optional(Type.String({ maxLength: 32 })),
    reason: Type.Optional(Type.String({ maxLength: 1000 })),
    // The deliveries page's "Retry all" form: back there afterwards.
    from: Type.Optional(Type.Literal('deliveries')),
    // A money action acts only once confirmed: the confirmation page's form carries confirm=1.
    confirm: Type.Optional(Type.Literal('1')),
  },
  { additionalProperties: false },
);

/**
 * The refund form as the refund action takes it: rupiah as a person types them (`50000`, `50.000`,
 * `Rp 50.000`, read by the one rule of `readRupiahText`); empty fields are left out.
 */
function refundInput(body: { amount?: string; reason?: string }): RefundInput {
  const typed = (body.amount ?? '').trim();
  const read = typed === '' ? undefined : readRupiahText(typed);
  if (read === 'not_an_amount' || read === 'fraction') {
    const shown = JSON.stringify(typed.slice(0, 32));
    throw new AppError(
      'AMOUNT_INVALID',
      read === 'fraction'
        ? `${shown} has a fraction of a rupiah for a refund.`
        : `${shown} is not an amount in rupiah for a refund.`,
      { errors: [{ path: 'amount', message: 'must be a whole number of rupiah' }] },
    );
  }
  const reason = (body.reason ?? '').trim();
  return { ...(read === undefined ? {} : { amount: read }), ...(reason === '' ? {} : { reason }) };
}

/** `requestKey`: the form's one-time key as the domain keeps it, so a refund sent again after a lost answer is the same refund. */
async function run(
  services: ActionDeps,
  req: FastifyRequest,
  action: Action,
  tx: TransactionRecord,
  body: { amount?: string; reason?: string },
  requestKey?: string,
): Promise<void> {
  const actor = operatorActor(req);
  switch (action) {
    case 'check':
      await paymentStatus(services, tx.orderId, actor);
      return;
    case 'refund':
      await refundPayment(
        services,
        tx.orderId,
        { ...refundInput(body), ...(requestKey === undefined ? {} : { requestKey }) },
        actor,
      );
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
  if (action === 'refund' && !offer.refund.ok && offer.refund.why === 'method')
    return v.t('pay_refund_method', { method: methodInSentence(v, tx.paymentType) });
  if (action === 'refund' && !offer.refund.ok && offer.refund.why === 'unsettled') return v.t('pay_refund_unsettled');
  // Once confirmed, the domain action judges the state (its refusal names the payment's state).
  if (confirmed) return undefined;
  const ok = action === 'refund' ? offer.refund.ok : offer[action];
  return ok
    ? undefined
    : v.t('cf_not_possible', { action: v.t(`cf_${action}_action`), status: v.word('st', tx.status) });
}

/** What the confirmation's form asks, as its key is bound to: the values it carries. */
function confirmedRequest(action: ConfirmedAction, tx: TransactionRecord, input: RefundInput): FormRequest {
  return formRequest(action, paymentSubject(tx.orderId, tx.account), {
    ...(input.amount === undefined ? {} : { amount: String(input.amount) }),
    ...(input.reason === undefined ? {} : { reason: input.reason }),
  });
}

/**
 * The confirmation of a money action: what will happen to which order and how much, a Confirm
 * button (a plain form carrying the same values and confirm=1; no script) and a way back.
 */
function confirmationBody(
  v: View,
  tx: TransactionRecord,
  action: ConfirmedAction,
  input: RefundInput,
  forms: FormTokens,
): Html {
  const { t } = v;
  const left = tx.nominal - tx.refundedAmount;
  const amount =
    action !== 'refund'
      ? rupiah(tx.nominal)
      : input.amount === undefined
        ? t('cf_everything_left', { amount: rupiah(left) })
        : rupiah(input.amount);
  // The page's heading names the action; this section is all the page is about.
  return html`<section class="confirm" data-confirm="${action}">
<dl class="kv">
<dt>${t('cf_order')}</dt><dd class="mono">${tx.orderId}</dd>
<dt>${t('cf_amount')}</dt><dd data-confirm-amount>${amount}</dd>
${input.reason ? html`<dt>${t('cf_reason')}</dt><dd>${input.reason}</dd>` : ''}
</dl>
<p>${t(`cf_${action}_consequence`)}</p>
<form method="post" action="${txActionLink(tx.orderId, tx.account, action)}">
<input type="hidden" name="_csrf" value="${forms.csrf}">
${formKeyField(forms.key(confirmedRequest(action, tx, input)))}
${input.amount !== undefined ? html`<input type="hidden" name="amount" value="${String(input.amount)}">` : ''}
${input.reason ? html`<input type="hidden" name="reason" value="${input.reason}">` : ''}
<input type="hidden" name="confirm" value="1">
<button type="submit" class="danger">${t(`cf_confirm_${action}`)}</button>
<a href="${txLink(tx.orderId, tx.account)}">${t('cf_back')}</a>
</form>
</section>`;
}

/** The page asking to confirm a money action, with the values of this request; `alert`: why it is asked again. */
function askConfirmation(
  ctx: ConsoleContext,
  req: FastifyRequest,
  reply: FastifyReply,
  tx: TransactionRecord,
  action: ConfirmedAction,
  body: { amount?: string; reason?: string },
  again?: { status: number; alert: Alert },
) {
  const v = ctx.view(req, reply);
  const input = action === 'refund' ? refundInput(body) : {};
  // A wrong amount is said before the confirmation, not after it.
  if (action === 'refund') refundAmount(input, tx.nominal, tx.nominal - tx.refundedAmount);
  const page = confirmationBody(v, tx, action, input, ctx.formTokens(req, reply));
  return ctx.render(reply, req, {
    title: v.t('title_confirm', { action: v.t(`cf_${action}_action`) }),
    section: 'transactions',
    here: txLink(tx.orderId, tx.account),
    body: page,
    ...again,
  });
}

export const consoleActionRoutes: RoutePlugin<ActionDeps> = async (app, services) => {
  const ctx = consoleContext(services);
  app.post(
    '/console/transactions/:order_id/:action',
    {
      config: { auth: 'op' },
      preHandler: app.csrfProtection,
      schema: {
        ...consoleDoc(
          'Console form: act on one payment',
          "check (ask the gateway), refund (amount empty = the rest), cancel, expire, or retry-deliveries; needs the form's CSRF token. Refund, cancel and expire first answer a confirmation page; only the confirmed form (confirm=1) acts. The confirmed form and retry-deliveries carry the one-time key (`_key`) of the page that showed them: sent again, the form answers its first outcome and does nothing more; without its key, nothing is done (403 FORM_KEY_INVALID, a refund, cancel or expire asks for confirmation again). Answers 303 to the payment page, or the page with what went wrong.",
        ),
        params: Type.Object({
          order_id: Type.String({ minLength: 1, maxLength: 512 }),
          action: Type.Union(ACTIONS.map((a) => Type.Literal(a))),
        }),
        querystring: Type.Object({ account: AccountQuery }),
        body: ActionBody,
      },
    },
    async (req, reply) => {
      // The payment's account is in the page's address (absent: `default`); its actions act there.
      const scoped = inAccount(services, req.query.account ?? DEFAULT_ACCOUNT);
      const tx = await findTransaction(scoped, req.params.order_id, operatorActor(req));
      if (!tx) throw new AppError('NOT_FOUND', `No payment ${JSON.stringify(req.params.order_id)}.`);
      const v = ctx.view(req, reply);
      const action = req.params.action;
      const showPayment = async (status: number, alert: Alert) =>
        ctx.render(reply, req, {
          title: v.t('title_payment', { order: tx.orderId }),
          section: 'transactions',
          status,
          alert,
          here: txLink(tx.orderId, tx.account),
          body: await transactionBody(
            scoped,
            (await findTransaction(scoped, tx.orderId)) ?? tx,
            v,
            ctx.formTokens(req, reply),
          ),
        });
      const done = withParam(
        req.body.from === 'deliveries' ? '/console/deliveries' : txLink(tx.orderId, tx.account),
        'done',
        action,
      );
      let location = done;
      try {
        if (needsConfirmation(action)) {
          const confirmed = req.body.confirm === '1';
          const refused = notOffered(v, action, tx, confirmed);
          if (refused) return await showPayment(409, { kind: 'error', text: refused });
          if (!confirmed) return askConfirmation(ctx, req, reply, tx, action, req.body);
        }
        if (action === 'check') await run(scoped, req, action, tx, req.body);
        else {
          const request = formRequest(action, paymentSubject(tx.orderId, tx.account), req.body);
          location = await actOnce(
            services,
            { operator: operatorBinding(req), key: req.body._key, request },
            async (requestKey) => {
              await run(scoped, req, action, tx, req.body, requestKey);
              return done;
            },
          );
        }
      } catch (err) {
        // A refusal is answered with the same page and what went wrong on top, so the operator can correct and retry.
        const e = knownProblem(err);
        if (!e) throw err;
        // A confirmed form without its key is asked again, with a key of its own, while the action is still offered: nothing was done.
        if (e.code === 'FORM_KEY_INVALID' && needsConfirmation(action) && !notOffered(v, action, tx, false))
          return askConfirmation(ctx, req, reply, tx, action, req.body, {
            status: e.status,
            alert: errorAlert(v, e, req.id),
          });
        return showPayment(e.status, errorAlert(v, e, req.id));
      }
      return reply.redirect(location, 303);
    },
  );

  app.post(
    '/console/deliveries/replay',
    {
      config: { auth: 'op' },
      preHandler: app.csrfProtection,
      schema: {
        ...consoleDoc(
          'Console form: replay the ERP events of a window',
          'since (ISO date-time with offset), until and order_id optional; dry_run=1 only counts (answers the deliveries page with the count). Otherwise needs the one-time key (`_key`) of the page that showed it: sent again, it answers as the first time and re-queues nothing more; without its key, nothing is done (403 FORM_KEY_INVALID). Answers 303 to the deliveries page.',
        ),
        body: Type.Object(
          {
            _csrf: CsrfField,
            _key: FormKeyField,
            since: Type.String({ maxLength: 40 }),
            until: Type.Optional(Type.String({ maxLength: 40 })),
            order_id: Type.Optional(Type.String({ maxLength: 255 })),
            dry_run: Type.Optional(Type.Literal('1')),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (req, reply) => {
      const b = req.body;
      const input = {
        since: b.since.trim(),
        until: b.until?.trim() ? b.until.trim() : undefined,
        orderId: b.order_id?.trim() ? b.order_id.trim() : undefined,
      };
      const v = ctx.view(req, reply);
      const page = async (status: number, alert: Alert) =>
        ctx.render(reply, req, {
          title: v.t('title_deliveries'),
          section: 'deliveries',
          status,
          alert,
          body: await deliveriesBody(services, undefined, undefined, v, ctx.formTokens(req, reply), {
            actor: operatorActor(req),
            accounts: await switchableAccounts(services, req),
          }),
        });
      try {
        if (b.dry_run === '1') {
          const counted = await replayDeliveries(services, { ...input, dryRun: true }, operatorActor(req));
          return await page(200, { kind: 'ok', text: v.t('dl_replay_counted', { count: counted.count }) });
        }
        const location = await actOnce(
          services,
          { operator: operatorBinding(req), key: b._key, request: formRequest('replay', 'deliveries') },
          async () => {
            await replayDeliveries(services, input, operatorActor(req));
            return '/console/deliveries?done=replay';
          },
        );
        return await reply.redirect(location, 303);
      } catch (err) {
        const e = knownProblem(err);
        if (!e) throw err;
        return page(e.status, errorAlert(v, e, req.id));
      }
    },
  );

  app.post(
    '/console/deliveries/:event_id/retry',
    {
      config: { auth: 'op' },
      preHandler: app.csrfProtection,
      schema: {
        ...consoleDoc(
          'Console form: retry one ERP delivery',
          "Needs the form's CSRF token and the one-time key (`_key`) of the page that showed it: sent again, it answers as the first time and re-queues nothing more; without its key, nothing is done (403 FORM_KEY_INVALID). Answers 303 to the deliveries page.",
        ),
        params: Type.Object({ event_id: EventId }),
        body: Type.Object({ _csrf: CsrfField, _key: FormKeyField }, { additionalProperties: false }),
      },
    },
    async (req, reply) => {
      const eventId = req.params.event_id;
      // An unknown event is a 404 whatever the form carries.
      await findDelivery(services, eventId, operatorActor(req));
      const location = await actOnce(
        services,
        { operator: operatorBinding(req), key: req.body._key, request: formRequest('retry', eventId) },
        async () => {
          await retryDelivery(services, eventId, operatorActor(req));
          return '/console/deliveries?done=retry';
        },
      );
      return reply.redirect(location, 303);
    },
  );
};
