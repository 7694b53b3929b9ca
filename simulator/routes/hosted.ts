import type { FastifyInstance, FastifyReply } from 'fastify';
import type { SimContext } from '../context.js';
import { instructionsPage, messagePage, methodsPage, resultPage } from '../html.js';
import { isObject } from '../lib/validate.js';
import type { PaymentLink, SnapSession, Txn } from '../state.js';
import { linkIsLive } from './payment-links.js';

type Html = { status: number; html: string } | { redirect: string };

function page(reply: FastifyReply, r: Html): FastifyReply {
  if ('redirect' in r) return reply.redirect(r.redirect, 303);
  return reply.code(r.status).type('text/html; charset=utf-8').send(r.html);
}

function gone(title: string, message: string, status = 410): Html {
  return { status, html: messagePage(title, message) };
}

function chosenMethod(body: unknown, allowed: string[]): string | undefined {
  const m = isObject(body) ? body.method : undefined;
  return typeof m === 'string' && allowed.includes(m) ? m : undefined;
}

/** The page of one transaction: instructions while pending, the result once paid. */
function txnPage(t: Txn | undefined, payAction: string): Html {
  if (!t) return gone('Not found', 'This payment does not exist.', 404);
  if (t.status === 'pending') return { status: 200, html: instructionsPage(t, payAction) };
  if (t.status === 'capture' || t.status === 'settlement') return { status: 200, html: resultPage(t) };
  return gone('Payment closed', `This payment is ${t.status === 'expire' ? 'expired' : t.status}.`);
}

function linkState(ctx: SimContext, link: PaymentLink | undefined): Html | undefined {
  if (!link) return gone('Not found', 'This payment link does not exist.', 404);
  if (link.deleted_at) return gone('Payment link inactive', 'This payment link has been deactivated by the merchant.');
  if (!linkIsLive(link)) return gone('Payment link expired', 'This payment link has expired.');
  const usage = ctx.engine.linkUsage(link);
  if (usage.paid >= link.usage_limit) return gone('Payment link used', 'This payment link has already been paid.');
  return undefined;
}

function linkPage(ctx: SimContext, link: PaymentLink): Html {
  const usage = ctx.engine.linkUsage(link);
  const base = `/payment-links/${link.payment_link_id}`;
  if (usage.paid + usage.reserved >= link.usage_limit) {
    const pending = link.purchases.filter((p) => ctx.ledger.txns.get(p.transaction_id)?.status === 'pending');
    const last = pending[pending.length - 1];
    if (last) return { redirect: `${base}/t/${last.transaction_id}` };
  }
  return {
    status: 200,
    html: methodsPage({ title: link.title ?? 'Payment', orderId: link.order_id, amount: link.gross_amount, items: link.items, methods: link.enabled_payments, action: base }),
  };
}

function snapState(s: SnapSession | undefined): Html | undefined {
  if (!s) return gone('Not found', 'This payment page does not exist.', 404);
  if (s.state === 'superseded') return gone('Payment page replaced', 'This payment page is no longer valid.');
  if (s.transaction_id === undefined && s.expires_at.getTime() <= Date.now()) return gone('Payment page expired', 'This payment page has expired.');
  return undefined;
}

function registerLinkPages(app: FastifyInstance, ctx: SimContext): void {
  type P = { Params: { plid: string; txid: string } };
  const linkTxn = (link: PaymentLink, txid: string): Txn | undefined =>
    link.purchases.some((p) => p.transaction_id === txid) ? ctx.ledger.txns.get(txid) : undefined;
  app.get<P>('/payment-links/:plid', async (req, reply) => {
    const link = ctx.ledger.links.get(req.params.plid);
    return page(reply, linkState(ctx, link) ?? (link ? linkPage(ctx, link) : gone('Not found', 'Unknown link', 404)));
  });
  app.post<P>('/payment-links/:plid', async (req, reply) => {
    const link = ctx.ledger.links.get(req.params.plid);
    const blocked = linkState(ctx, link);
    if (blocked || !link) return page(reply, blocked ?? gone('Not found', 'Unknown link', 404));
    // A pending attempt reserves a use: with every use reserved, the customer goes back to it.
    const current = linkPage(ctx, link);
    if ('redirect' in current) return page(reply, current);
    const method = chosenMethod(req.body, link.enabled_payments);
    if (!method) return page(reply, gone('Invalid choice', 'Please choose one of the offered payment methods.', 400));
    const t = ctx.engine.createPurchase(link, method);
    return page(reply, { redirect: `/payment-links/${link.payment_link_id}/t/${t.transaction_id}` });
  });
  app.get<P>('/payment-links/:plid/t/:txid', async (req, reply) => {
    const link = ctx.ledger.links.get(req.params.plid);
    const t = link ? linkTxn(link, req.params.txid) : undefined;
    return page(reply, txnPage(t, `/payment-links/${req.params.plid}/t/${req.params.txid}/pay`));
  });
  app.post<P>('/payment-links/:plid/t/:txid/pay', async (req, reply) => {
    const link = ctx.ledger.links.get(req.params.plid);
    const t = link ? linkTxn(link, req.params.txid) : undefined;
    if (!t) return page(reply, gone('Not found', 'This payment does not exist.', 404));
    if (t.status === 'pending') ctx.engine.pay(t);
    return page(reply, { redirect: `/payment-links/${req.params.plid}/t/${req.params.txid}` });
  });
}

function registerSnapPages(app: FastifyInstance, ctx: SimContext): void {
  type P = { Params: { token: string; txid: string } };
  const base = (token: string): string => `/snap/v3/redirection/${token}`;
  const snapTxn = (s: SnapSession | undefined, txid: string): Txn | undefined =>
    s && s.transaction_id === txid ? ctx.ledger.txns.get(txid) : undefined;
  app.get<P>('/snap/v3/redirection/:token', async (req, reply) => {
    const s = ctx.ledger.snaps.get(req.params.token);
    const blocked = snapState(s);
    if (blocked || !s) return page(reply, blocked ?? gone('Not found', 'Unknown page', 404));
    const t = s.transaction_id === undefined ? undefined : ctx.ledger.txns.get(s.transaction_id);
    if (t && t.status === 'pending') return page(reply, { redirect: `${base(s.token)}/t/${t.transaction_id}` });
    if (t) return page(reply, gone('Payment page used', 'This payment page has already been used.'));
    const o = s.order;
    return page(reply, { status: 200, html: methodsPage({ title: 'Payment', orderId: o.order_id, amount: o.gross_amount, items: o.items, methods: s.enabled_payments, action: base(s.token) }) });
  });
  app.post<P>('/snap/v3/redirection/:token', async (req, reply) => {
    const s = ctx.ledger.snaps.get(req.params.token);
    const blocked = snapState(s);
    if (blocked || !s) return page(reply, blocked ?? gone('Not found', 'Unknown page', 404));
    if (s.transaction_id !== undefined) return page(reply, { redirect: `${base(s.token)}/t/${s.transaction_id}` });
    const method = chosenMethod(req.body, s.enabled_payments);
    if (!method) return page(reply, gone('Invalid choice', 'Please choose one of the offered payment methods.', 400));
    if (ctx.engine.orderIdTaken(s.order.order_id)) return page(reply, gone('Order already used', 'This order has already been paid or is being paid.', 409));
    const t = ctx.engine.pickSnapMethod(s, method);
    return page(reply, { redirect: `${base(s.token)}/t/${t.transaction_id}` });
  });
  app.get<P>('/snap/v3/redirection/:token/t/:txid', async (req, reply) => {
    const t = snapTxn(ctx.ledger.snaps.get(req.params.token), req.params.txid);
    return page(reply, txnPage(t, `${base(req.params.token)}/t/${req.params.txid}/pay`));
  });
  app.post<P>('/snap/v3/redirection/:token/t/:txid/pay', async (req, reply) => {
    const t = snapTxn(ctx.ledger.snaps.get(req.params.token), req.params.txid);
    if (!t) return page(reply, gone('Not found', 'This payment does not exist.', 404));
    if (t.status === 'pending') ctx.engine.pay(t);
    return page(reply, { redirect: `${base(req.params.token)}/t/${req.params.txid}` });
  });
}

export function registerHosted(app: FastifyInstance, ctx: SimContext): void {
  registerLinkPages(app, ctx);
  registerSnapPages(app, ctx);
}
