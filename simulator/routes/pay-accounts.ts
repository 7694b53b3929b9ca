import type { FastifyInstance, FastifyReply } from 'fastify';
import type { SimContext } from '../context.js';
import { merchantOf } from '../gateway-hooks.js';
import { HOSTED_CSP, layout, messagePage, tr } from '../html.js';
import { coreError, sendCore } from '../http.js';
import type { Lang } from '../i18n/index.js';
import { escapeHtml as e, uuid } from '../lib/format.js';
import { isHttpUrl, isObject, type Json } from '../lib/validate.js';
import type { PayAccount } from '../state.js';
import { VALIDATION_MESSAGE } from './charge.js';
import { pageLang } from './hosted.js';

/** The gateway's sandbox GoPay numbers that never link: the wallet's answer, "202" with its message. */
const SANDBOX_REFUSALS: ReadonlyMap<string, string> = new Map([
  ['123450001', 'User Not Found'],
  ['123450002', 'Wallet is Blocked'],
]);

const WALLET_BALANCE = '1000000.00';

function notFound(reply: FastifyReply, ctx: SimContext): FastifyReply {
  return sendCore(reply, coreError('404', "Account doesn't exist."), ctx.faults);
}

function accountBody(a: PayAccount): Json {
  const body: Json = {
    status_code: a.status === 'PENDING' ? '201' : '200',
    payment_type: 'gopay',
    account_id: a.account_id,
    account_status: a.status,
  };
  if (a.status === 'ENABLED')
    body.metadata = {
      payment_options: [
        {
          name: 'GOPAY_WALLET',
          active: true,
          balance: { value: WALLET_BALANCE, currency: 'IDR' },
          metadata: {},
          token: a.wallet_token,
        },
      ],
    };
  return body;
}

function checkPartner(body: Json, errors: string[]): { phone: string; country: string; redirect?: string } | undefined {
  if (body.payment_type !== 'gopay') errors.push('payment_type must be gopay');
  const p = body.gopay_partner;
  if (!isObject(p)) {
    errors.push('gopay_partner is required');
    return undefined;
  }
  const phone = typeof p.phone_number === 'string' ? p.phone_number.trim() : '';
  if (!/^[1-9]\d{0,17}$/.test(phone))
    errors.push('gopay_partner.phone_number must be numeric digits and must not begin with 0');
  const country = typeof p.country_code === 'string' ? p.country_code.trim() : '';
  if (!/^\d{1,3}$/.test(country)) errors.push('gopay_partner.country_code must be numeric digits');
  const redirect = p.redirect_url;
  if (redirect !== undefined && (typeof redirect !== 'string' || !isHttpUrl(redirect)))
    errors.push('gopay_partner.redirect_url must be an http(s) URL');
  if (errors.length > 0) return undefined;
  return typeof redirect === 'string' ? { phone, country, redirect } : { phone, country };
}

/** GoPay account linking (`/v2/pay/account`): link, read, unbind. */
export function registerPayAccounts(scope: FastifyInstance, ctx: SimContext): void {
  scope.post('/v2/pay/account', async (req, reply) => {
    const body = isObject(req.body) ? req.body : {};
    const errors: string[] = [];
    const partner = checkPartner(body, errors);
    if (!partner)
      return sendCore(reply, coreError('400', VALIDATION_MESSAGE, { validation_messages: errors }), ctx.faults);
    const refused = SANDBOX_REFUSALS.get(partner.phone);
    if (refused !== undefined)
      return sendCore(
        reply,
        { status_code: '202', payment_type: 'gopay', channel_response_message: refused },
        ctx.faults,
      );
    const a: PayAccount = {
      account_id: uuid(),
      link_id: `gpar_${uuid()}`,
      phone_number: partner.phone,
      country_code: partner.country,
      status: 'PENDING',
      wallet_token: uuid(),
    };
    if (partner.redirect !== undefined) a.redirect_url = partner.redirect;
    merchantOf(req).ledger.payAccounts.set(a.account_id, a);
    const link = `${ctx.config.baseUrl}/v2/pay/account/${a.link_id}/link`;
    return sendCore(
      reply,
      {
        ...accountBody(a),
        actions: [
          { name: 'activation-deeplink', method: 'GET', url: link },
          { name: 'activation-link-url', method: 'GET', url: link },
          { name: 'activation-link-app', method: 'GET', url: link },
        ],
        metadata: { reference_id: uuid() },
      },
      ctx.faults,
    );
  });

  scope.get<{ Params: { id: string } }>('/v2/pay/account/:id', async (req, reply) => {
    const a = merchantOf(req).ledger.payAccounts.get(req.params.id);
    return a ? sendCore(reply, accountBody(a), ctx.faults) : notFound(reply, ctx);
  });

  // Only an ENABLED account can be unbound; a PENDING or already DISABLED one answers 412.
  scope.post<{ Params: { id: string } }>('/v2/pay/account/:id/unbind', async (req, reply) => {
    const a = merchantOf(req).ledger.payAccounts.get(req.params.id);
    if (!a) return notFound(reply, ctx);
    if (a.status !== 'ENABLED')
      return sendCore(reply, coreError('412', 'Account status cannot be updated.'), ctx.faults);
    a.status = 'DISABLED';
    return sendCore(
      reply,
      {
        status_code: '204',
        payment_type: 'gopay',
        account_id: a.account_id,
        account_status: 'DISABLED',
        channel_response_code: '0',
        channel_response_message: 'Process service request successfully.',
      },
      ctx.faults,
    );
  });
}

function html(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').header('content-security-policy', HOSTED_CSP).send(body);
}

function linkPage(lang: Lang, a: PayAccount, merchantId: string, action: string): string {
  const t = tr(lang);
  const phone = `<p id="phone">${e(t('gopayLink.phone', { phone: `${a.country_code}${a.phone_number}` }))}</p>`;
  const body =
    a.status === 'PENDING'
      ? `<h1>${e(t('gopayLink.title'))}</h1>${phone}
<form method="post" action="${e(action)}"><button id="link" type="submit">${e(t('gopayLink.confirm'))}</button></form>`
      : `<h1>${e(t('gopayLink.title'))}</h1>${phone}<div id="result" data-status="${e(a.status)}">${e(t('gopayLink.done'))}</div>`;
  return layout(lang, t('gopayLink.title'), body, merchantId);
}

/**
 * The activation page the `actions` URLs open, standing in for the GoPay app: the customer confirms,
 * the account becomes ENABLED and the browser goes on to the link's `redirect_url`.
 */
export function registerPayAccountPages(app: FastifyInstance, ctx: SimContext): void {
  const path = '/v2/pay/account/:linkId/link';
  app.get<{ Params: { linkId: string } }>(path, async (req, reply) => {
    const lang = pageLang(req, reply);
    const owned = ctx.merchants.payAccountByLink(req.params.linkId);
    if (!owned) return html(reply, 404, messagePage(tr(lang)('notFound.title'), tr(lang)('notFound.account'), lang));
    return html(reply, 200, linkPage(lang, owned.item, owned.merchant.id, req.url.split('?')[0] ?? ''));
  });
  app.post<{ Params: { linkId: string } }>(path, async (req, reply) => {
    const owned = ctx.merchants.payAccountByLink(req.params.linkId);
    if (!owned) {
      const lang = pageLang(req, reply);
      return html(reply, 404, messagePage(tr(lang)('notFound.title'), tr(lang)('notFound.account'), lang));
    }
    const a = owned.item;
    if (a.status === 'PENDING') a.status = 'ENABLED';
    return reply.redirect(a.redirect_url ?? req.url, 303);
  });
}
