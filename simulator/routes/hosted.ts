import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { HostedKey } from '../i18n/hosted.js';
import { negotiateLang, type Lang } from '../i18n/index.js';
import type { SimContext } from '../context.js';
import type { Owned } from '../merchants.js';
import { HOSTED_CSP, instructionsPage, messagePage, methodsPage, resultPage, statusLabel, tr } from '../html.js';
import { isObject } from '../lib/validate.js';
import type { PaymentLink, SnapSession, Txn } from '../state.js';
import { linkAmount, linkIsLive } from './payment-links.js';
import { formatRupiah } from '../i18n/index.js';

/**
 * The language of a hosted page: `?lang=id|en` (remembered in the `paylink_lang` cookie for the
 * pages that follow), else the cookie, else `Accept-Language`, else English.
 */
export function pageLang(req: FastifyRequest, reply: FastifyReply): Lang {
  const query = isObject(req.query) ? req.query.lang : undefined;
  const { lang, setCookie } = negotiateLang({
    query,
    cookieHeader: req.headers.cookie,
    acceptLanguage: req.headers['accept-language'],
    secure: req.protocol === 'https',
  });
  if (setCookie) void reply.header('set-cookie', setCookie);
  // One URL answers in either language.
  void reply.header('vary', 'Accept-Language, Cookie');
  return lang;
}

type Html = { status: number; html: string } | { redirect: string };
type Msg = readonly [title: HostedKey, text: HostedKey];

const NOT_FOUND_PAYMENT: Msg = ['notFound.title', 'notFound.payment'];
const NOT_FOUND_LINK: Msg = ['notFound.title', 'notFound.link'];
const NOT_FOUND_PAGE: Msg = ['notFound.title', 'notFound.page'];
const INVALID_CHOICE: Msg = ['invalidChoice.title', 'invalidChoice.text'];

function page(reply: FastifyReply, r: Html): FastifyReply {
  if ('redirect' in r) return reply.redirect(r.redirect, 303);
  return reply
    .code(r.status)
    .type('text/html; charset=utf-8')
    .header('content-security-policy', HOSTED_CSP)
    .send(r.html);
}

function gone(lang: Lang, [title, text]: Msg, status = 410, merchantId?: string): Html {
  const t = tr(lang);
  return { status, html: messagePage(t(title), t(text), lang, merchantId) };
}

function chosenMethod(body: unknown, allowed: string[]): string | undefined {
  const m = isObject(body) ? body.method : undefined;
  return typeof m === 'string' && allowed.includes(m) ? m : undefined;
}

/** The page of one transaction: instructions while pending (`switchAction`: a way back to the methods), the result once paid. */
async function txnPage(lang: Lang, tx: Txn | undefined, payAction: string, switchAction?: string): Promise<Html> {
  if (!tx) return gone(lang, NOT_FOUND_PAYMENT, 404);
  if (tx.status === 'pending') return { status: 200, html: await instructionsPage(lang, tx, payAction, switchAction) };
  if (tx.status === 'capture' || tx.status === 'settlement') return { status: 200, html: resultPage(lang, tx) };
  const t = tr(lang);
  return {
    status: 410,
    html: messagePage(t('closed.title'), t('closed.text', { status: statusLabel(tx.status, t) }), lang, tx.merchant_id),
  };
}

/** A link's page is its merchant's: its purchases go into that merchant's ledger. */
function linkState(lang: Lang, owned: Owned<PaymentLink> | undefined): Html | undefined {
  if (!owned) return gone(lang, NOT_FOUND_LINK, 404);
  const { merchant: m, item: link } = owned;
  if (link.deleted_at) return gone(lang, ['linkInactive.title', 'linkInactive.text'], 410, m.id);
  if (!linkIsLive(link)) return gone(lang, ['linkExpired.title', 'linkExpired.text'], 410, m.id);
  const usage = m.engine.linkUsage(link);
  if (usage.paid >= link.usage_limit) return gone(lang, ['linkUsed.title', 'linkUsed.text'], 410, m.id);
  return undefined;
}

function linkPage(lang: Lang, { merchant: m, item: link }: Owned<PaymentLink>): Html {
  const usage = m.engine.linkUsage(link);
  const base = `/payment-links/${link.payment_link_id}`;
  if (usage.paid + usage.reserved >= link.usage_limit) {
    const pending = link.purchases.filter(
      (p) => !p.left_at && m.ledger.txns.get(p.transaction_id)?.status === 'pending',
    );
    const last = pending[pending.length - 1];
    if (last) return { redirect: `${base}/t/${last.transaction_id}` };
  }
  return {
    status: 200,
    html: methodsPage(lang, {
      merchantId: m.id,
      title: link.title,
      orderId: link.order_id,
      amount: link.gross_amount,
      items: link.items,
      methods: link.enabled_payments,
      action: base,
      openAmount: link.dynamic_amount && {
        min: link.dynamic_amount.min_amount,
        max: link.dynamic_amount.max_amount,
        preset: link.dynamic_amount.preset_amount,
      },
    }),
  };
}

function snapState(lang: Lang, owned: Owned<SnapSession> | undefined): Html | undefined {
  if (!owned) return gone(lang, NOT_FOUND_PAGE, 404);
  const { merchant: m, item: s } = owned;
  if (s.state === 'superseded') return gone(lang, ['pageReplaced.title', 'pageReplaced.text'], 410, m.id);
  if (s.transaction_id === undefined && s.expires_at.getTime() <= Date.now())
    return gone(lang, ['pageExpired.title', 'pageExpired.text'], 410, m.id);
  return undefined;
}

function registerLinkPages(app: FastifyInstance, ctx: SimContext): void {
  type P = { Params: { plid: string; txid: string } };
  const linkTxn = (owned: Owned<PaymentLink> | undefined, txid: string): Txn | undefined =>
    owned?.item.purchases.some((p) => p.transaction_id === txid) ? owned.merchant.ledger.txns.get(txid) : undefined;
  app.get<P>('/payment-links/:plid', async (req, reply) => {
    const lang = pageLang(req, reply);
    const owned = ctx.merchants.link(req.params.plid);
    return page(reply, linkState(lang, owned) ?? (owned ? linkPage(lang, owned) : gone(lang, NOT_FOUND_LINK, 404)));
  });
  app.post<P>('/payment-links/:plid', async (req, reply) => {
    const lang = pageLang(req, reply);
    const owned = ctx.merchants.link(req.params.plid);
    const blocked = linkState(lang, owned);
    if (blocked || !owned) return page(reply, blocked ?? gone(lang, NOT_FOUND_LINK, 404));
    // A pending attempt reserves a use: with every use reserved, the customer goes back to it.
    const current = linkPage(lang, owned);
    if ('redirect' in current) return page(reply, current);
    const { merchant: m, item: link } = owned;
    const method = chosenMethod(req.body, link.enabled_payments);
    if (!method) return page(reply, gone(lang, INVALID_CHOICE, 400, m.id));
    const amount = linkAmount(link, isObject(req.body) ? req.body.amount : undefined);
    if ('error' in amount) {
      const t = tr(lang);
      const bounds = {
        min: formatRupiah(link.dynamic_amount?.min_amount),
        max: formatRupiah(link.dynamic_amount?.max_amount),
      };
      return page(reply, {
        status: 400,
        html: messagePage(t('amountInvalid.title'), t('amountInvalid.text', bounds), lang, m.id),
      });
    }
    const t = m.engine.createPurchase(link, method, amount.amount);
    return page(reply, { redirect: `/payment-links/${link.payment_link_id}/t/${t.transaction_id}` });
  });
  app.get<P>('/payment-links/:plid/t/:txid', async (req, reply) => {
    const lang = pageLang(req, reply);
    const t = linkTxn(ctx.merchants.link(req.params.plid), req.params.txid);
    const here = `/payment-links/${req.params.plid}/t/${req.params.txid}`;
    return page(reply, await txnPage(lang, t, `${here}/pay`, `${here}/switch`));
  });
  // Back to the methods: this attempt stops reserving the link's use (it stays payable until it expires).
  app.post<P>('/payment-links/:plid/t/:txid/switch', async (req, reply) => {
    const lang = pageLang(req, reply);
    const owned = ctx.merchants.link(req.params.plid);
    const purchase = owned?.item.purchases.find((p) => p.transaction_id === req.params.txid);
    if (!owned || !purchase) return page(reply, gone(lang, NOT_FOUND_PAYMENT, 404));
    if (owned.merchant.ledger.txns.get(purchase.transaction_id)?.status === 'pending') purchase.left_at ??= new Date();
    return page(reply, { redirect: `/payment-links/${req.params.plid}` });
  });
  app.post<P>('/payment-links/:plid/t/:txid/pay', async (req, reply) => {
    const lang = pageLang(req, reply);
    const owned = ctx.merchants.link(req.params.plid);
    const t = linkTxn(owned, req.params.txid);
    if (!t || !owned) return page(reply, gone(lang, NOT_FOUND_PAYMENT, 404));
    if (t.status === 'pending') owned.merchant.engine.pay(t);
    return page(reply, { redirect: `/payment-links/${req.params.plid}/t/${req.params.txid}` });
  });
}

function registerSnapPages(app: FastifyInstance, ctx: SimContext): void {
  type P = { Params: { token: string; txid: string } };
  const base = (token: string): string => `/snap/v3/redirection/${token}`;
  const snapTxn = (owned: Owned<SnapSession> | undefined, txid: string): Txn | undefined =>
    owned && owned.item.transaction_id === txid ? owned.merchant.ledger.txns.get(txid) : undefined;
  app.get<P>('/snap/v3/redirection/:token', async (req, reply) => {
    const lang = pageLang(req, reply);
    const owned = ctx.merchants.snap(req.params.token);
    const blocked = snapState(lang, owned);
    if (blocked || !owned) return page(reply, blocked ?? gone(lang, NOT_FOUND_PAGE, 404));
    const { merchant: m, item: s } = owned;
    const t = s.transaction_id === undefined ? undefined : m.ledger.txns.get(s.transaction_id);
    if (t && t.status === 'pending') return page(reply, { redirect: `${base(s.token)}/t/${t.transaction_id}` });
    if (t) return page(reply, gone(lang, ['pageUsed.title', 'pageUsed.text'], 410, m.id));
    const o = s.order;
    return page(reply, {
      status: 200,
      html: methodsPage(lang, {
        merchantId: m.id,
        orderId: o.order_id,
        amount: o.gross_amount,
        items: o.items,
        methods: s.enabled_payments,
        action: base(s.token),
      }),
    });
  });
  app.post<P>('/snap/v3/redirection/:token', async (req, reply) => {
    const lang = pageLang(req, reply);
    const owned = ctx.merchants.snap(req.params.token);
    const blocked = snapState(lang, owned);
    if (blocked || !owned) return page(reply, blocked ?? gone(lang, NOT_FOUND_PAGE, 404));
    const { merchant: m, item: s } = owned;
    if (s.transaction_id !== undefined) return page(reply, { redirect: `${base(s.token)}/t/${s.transaction_id}` });
    const method = chosenMethod(req.body, s.enabled_payments);
    if (!method) return page(reply, gone(lang, INVALID_CHOICE, 400, m.id));
    if (m.engine.orderIdTaken(s.order.order_id))
      return page(reply, gone(lang, ['orderUsed.title', 'orderUsed.text'], 409, m.id));
    const t = m.engine.pickSnapMethod(s, method);
    return page(reply, { redirect: `${base(s.token)}/t/${t.transaction_id}` });
  });
  app.get<P>('/snap/v3/redirection/:token/t/:txid', async (req, reply) => {
    const lang = pageLang(req, reply);
    const t = snapTxn(ctx.merchants.snap(req.params.token), req.params.txid);
    return page(reply, await txnPage(lang, t, `${base(req.params.token)}/t/${req.params.txid}/pay`));
  });
  app.post<P>('/snap/v3/redirection/:token/t/:txid/pay', async (req, reply) => {
    const lang = pageLang(req, reply);
    const owned = ctx.merchants.snap(req.params.token);
    const t = snapTxn(owned, req.params.txid);
    if (!t || !owned) return page(reply, gone(lang, NOT_FOUND_PAYMENT, 404));
    if (t.status === 'pending') owned.merchant.engine.pay(t);
    return page(reply, { redirect: `${base(req.params.token)}/t/${req.params.txid}` });
  });
}

export function registerHosted(app: FastifyInstance, ctx: SimContext): void {
  registerLinkPages(app, ctx);
  registerSnapPages(app, ctx);
}
