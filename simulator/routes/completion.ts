import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Lang } from '../i18n/index.js';
import { SANDBOX_OTP } from '../cards.js';
import type { SimContext } from '../context.js';
import type { Owned } from '../merchants.js';
import { completionPage, finishedPage, threeDsPage } from '../completion-html.js';
import { HOSTED_CSP, messagePage, tr } from '../html.js';
import { isObject } from '../lib/validate.js';
import { isRedirectType } from '../methods.js';
import type { Txn } from '../state.js';
import { pageLang } from './hosted.js';

type P = { Params: { id: string; ref: string } };

function html(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').header('content-security-policy', HOSTED_CSP).send(body);
}

function missing(reply: FastifyReply, lang: Lang): FastifyReply {
  const t = tr(lang);
  return html(reply, 404, messagePage(t('notFound.title'), t('notFound.payment'), lang));
}

/** The 3DS URL ends in "<masked card>-<transaction id>"; both must match the charge. */
function threeDsTxn(ctx: SimContext, ref: string): Owned<Txn> | undefined {
  const owned = ctx.merchants.txnById(ref.slice(-36));
  const t = owned?.item;
  return t && t.card && t.redirect_url !== undefined && t.redirect_url.endsWith(`/${ref}`) ? owned : undefined;
}

function registerThreeDs(app: FastifyInstance, ctx: SimContext): void {
  const path = '/v2/token/rba/redirect/:ref';
  app.get<P>(path, async (req, reply) => {
    const lang = pageLang(req, reply);
    const t = threeDsTxn(ctx, req.params.ref)?.item;
    if (!t) return missing(reply, lang);
    return html(
      reply,
      200,
      t.status === 'pending' ? threeDsPage(lang, t, req.url.split('?')[0] ?? '') : finishedPage(lang, t),
    );
  });
  app.post<P>(path, async (req, reply) => {
    const owned = threeDsTxn(ctx, req.params.ref);
    if (!owned) return missing(reply, pageLang(req, reply));
    const otp = isObject(req.body) && typeof req.body.otp === 'string' ? req.body.otp.trim() : '';
    if (owned.item.status === 'pending') owned.merchant.engine.complete3ds(owned.item, otp === SANDBOX_OTP);
    return reply.redirect(req.url, 303);
  });
}

/** Redirect payment types and e-wallet deeplinks: a page where the customer approves the payment. */
function registerApprovalPage(
  app: FastifyInstance,
  ctx: SimContext,
  path: string,
  matches: (t: Txn, kind: string) => boolean,
): void {
  const find = (id: string, kind: string): Owned<Txn> | undefined => {
    const owned = ctx.merchants.txnById(id);
    return owned && matches(owned.item, kind) ? owned : undefined;
  };
  app.get<P & { Params: { kind: string } }>(path, async (req, reply) => {
    const lang = pageLang(req, reply);
    const t = find(req.params.id, req.params.kind)?.item;
    if (!t) return missing(reply, lang);
    return html(
      reply,
      200,
      t.status === 'pending' ? completionPage(lang, t, `${req.url.split('?')[0] ?? ''}/pay`) : finishedPage(lang, t),
    );
  });
  app.post<P & { Params: { kind: string } }>(`${path}/pay`, async (req, reply) => {
    const owned = find(req.params.id, req.params.kind);
    if (!owned) return missing(reply, pageLang(req, reply));
    if (owned.item.status === 'pending') owned.merchant.engine.pay(owned.item);
    return reply.redirect(req.url.replace(/\/pay(\?.*)?$/, ''), 303);
  });
}

export function registerCompletionPages(app: FastifyInstance, ctx: SimContext): void {
  registerThreeDs(app, ctx);
  registerApprovalPage(
    app,
    ctx,
    '/v2/:kind/redirect/:id',
    (t, kind) => isRedirectType(kind) && t.payment_type === kind,
  );
  registerApprovalPage(
    app,
    ctx,
    '/v2/:kind/:id/deeplink',
    (t, kind) => (kind === 'gopay' || kind === 'shopeepay') && t.payment_type === kind,
  );
}
