import type { Deps } from '../../types.js';
import type { TransactionRecord } from '../../model/payment.js';
import { html, raw, rupiah, type Html } from './html.js';
import { statusBadge } from './layout.js';
import { timeline, timelineList } from './transaction.js';
import { isUndelivered } from '../../domain/erp-events/deliveries.js';
import { availableActions } from '../../domain/actions/refund.js';
import { jsonObject } from '../schemas/json-object.js';
import { txActionLink, txLink } from './transactions.js';
import { paymentSubject } from './accounts.js';
import { EMPTY, type View } from './view.js';
import { paymentMoneySection } from './money.js';
import { formKeyField, formRequest } from './form-keys.js';
import type { FormTokens } from './context.js';
import { linkOpenAmount, linkUsageLimit } from '../../domain/orders/records.js';
import { linkPurchases } from '../../domain/orders/links.js';

/** A payment type's word inside an Indonesian sentence starts in lower case ("Pembayaran transfer bank …"); a brand (GoPay, QRIS) keeps its capitals. */
export function methodInSentence(v: View, paymentType: string | null): string {
  const word = v.word('pt', paymentType ?? '');
  return v.lang === 'id' && /^[A-Z][a-z]+\b/.test(word) ? word.charAt(0).toLowerCase() + word.slice(1) : word;
}

const MONEY_MOVED: ReadonlySet<string> = new Set(['paid', 'partially_refunded', 'refunded', 'chargeback']);

function csrfField(token: string): Html {
  return html`<input type="hidden" name="_csrf" value="${token}">`;
}

function actionForm(
  tx: TransactionRecord,
  action: string,
  token: string,
  title: string,
  button: string,
  fields: Html = html``,
  danger = false,
): Html {
  return html`<form method="post" action="${txActionLink(tx.orderId, tx.account, action)}" aria-labelledby="a-${action}">${csrfField(token)}<h3 id="a-${action}">${title}</h3>${fields}<button type="submit"${danger ? html` class="danger"` : ''}>${button}</button></form>`;
}

/**
 * What the customer's QR code encodes, from the gateway's answer: QRIS's `qr_string`; for GoPay,
 * whose answer has only URLs, its `deeplink-redirect` URL, which a phone's camera opens in the
 * GoPay app (its `generate-qr-code` URL is an image on the gateway's host, which the console's
 * CSP does not load).
 */
export function qrPayloadOf(tx: TransactionRecord): string | undefined {
  if (!tx.gatewayJson) return undefined;
  const answer = jsonObject(tx.gatewayJson);
  const fits = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 2000;
  if (fits(answer.qr_string)) return answer.qr_string;
  if (tx.paymentType !== 'gopay' || !Array.isArray(answer.actions)) return undefined;
  const deeplink: unknown = answer.actions.find(
    (a: unknown) => typeof a === 'object' && a !== null && (a as Record<string, unknown>).name === 'deeplink-redirect',
  );
  const url = deeplink ? (deeplink as Record<string, unknown>).url : undefined;
  return fits(url) && /^https?:\/\//.test(url) ? url : undefined;
}

/** The QR code as inline SVG drawn here (the console's CSP loads no image from elsewhere), while the payment can still be paid. */
async function qrFigure(tx: TransactionRecord, v: View): Promise<Html> {
  const payload = tx.status === 'pending' ? qrPayloadOf(tx) : undefined;
  if (!payload) return html``;
  // Loaded on the first page that draws one, not at start (qrcode: about 60 ms of CPU).
  const { default: QRCode } = await import('qrcode');
  const svg = await QRCode.toString(payload, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  // The SVG is the library's drawing (paths only), not text from the payment.
  return html`<figure class="qr" role="img" aria-label="${v.t('pay_qr_desc', { amount: rupiah(tx.nominal) })}" data-qr>${raw(svg)}<figcaption>${v.t('pay_qr')}</figcaption></figure>`;
}

/** A link used more than once: its purchases, each a payment of its own with its own page. */
function purchaseList(purchases: readonly TransactionRecord[], v: View): Html {
  const { t } = v;
  return html`<section class="card" aria-labelledby="h-purchases" data-purchases="${purchases.length}"><h2 id="h-purchases">${t('pay_purchases')}</h2>
<p class="muted">${t('pay_purchases_note')}</p>
${
  purchases.length === 0
    ? html`<p>${t('pay_no_purchases')}</p>`
    : html`<table><thead><tr><th scope="col">${t('tx_order_id')}</th><th scope="col">${t('tx_status')}</th><th scope="col">${t('tx_amount')}</th><th scope="col">${t('tx_payment_type')}</th><th scope="col">${t('tx_created')}</th></tr></thead><tbody>
${purchases.map((p) => html`<tr data-purchase="${p.orderId}"><td class="mono"><a href="${txLink(p.orderId, p.account)}">${p.orderId}</a></td><td>${statusBadge(v, p.status)}</td><td data-purchase-amount="${p.paidAmount ?? p.nominal}">${rupiah(p.paidAmount ?? p.nominal)}</td><td>${p.paymentType ? v.word('pt', p.paymentType) : EMPTY}</td><td>${v.when(p.createdAt)}</td></tr>`)}
</tbody></table>`
}
</section>`;
}

export async function transactionBody(
  services: Deps<'config' | 'store'>,
  tx: TransactionRecord,
  v: View,
  forms: FormTokens,
): Promise<Html> {
  const { t } = v;
  const token = forms.csrf;
  const { entries, events } = await timeline(services, tx, v);
  const undelivered = events.filter(isUndelivered);
  const offer = availableActions(tx);
  const finance = forms.may('finance');
  // The gateway's own status beside ours, when it says something ours does not (e.g. captured, not settled).
  const gatewayWord = tx.transactionStatus ? v.word('gs', tx.transactionStatus) : undefined;
  // A paid payment no longer expires; a card payment is paid when captured, before it settles.
  const paidAt = MONEY_MOVED.has(tx.status) ? (tx.settlementTime ?? tx.transactionTime ?? tx.updatedAt) : undefined;
  const usage = linkUsageLimit(tx);
  const open = linkOpenAmount(tx);
  const purchases = await linkPurchases(services, tx);
  return html`
<div class="cards">
<section class="card" aria-labelledby="h-summary"><h2 id="h-summary">${t('pay_heading')}</h2>
<dl class="kv">
<dt>${t('tx_order_id')}</dt><dd class="mono">${tx.orderId}</dd>
<dt>mercant_id</dt><dd class="mono">${tx.mercantId}</dd>
<dt>${t('pay_gateway_order_id')}</dt><dd class="mono">${tx.gatewayOrderId}</dd>
<dt>${t('tx_status')}</dt><dd data-status="${tx.status}">${statusBadge(v, tx.status)}${gatewayWord && gatewayWord !== v.word('st', tx.status) ? html` <span class="muted" data-gateway-status="${tx.transactionStatus}">${gatewayWord}</span>` : ''}</dd>
${
  open === undefined
    ? html`<dt>${t('tx_amount')}</dt><dd>${rupiah(tx.nominal)}</dd>`
    : html`<dt>${t('pay_open_amount')}</dt><dd data-open-min="${open.min}" data-open-max="${open.max}"${open.preset === undefined ? '' : html` data-open-preset="${open.preset}"`}>${t('pay_open_bounds', { min: rupiah(open.min), max: rupiah(open.max) })}${open.preset === undefined ? '' : html` <span class="muted">(${t('pay_open_preset', { preset: rupiah(open.preset) })})</span>`}</dd>`
}
<dt>${t('pay_refunded')}</dt><dd data-refunded="${tx.refundedAmount}">${rupiah(tx.refundedAmount)}</dd>
<dt>${t('tx_payment_type')}</dt><dd>${tx.paymentType ? v.word('pt', tx.paymentType) : EMPTY}</dd>
<dt>${t('pay_transaction_id')}</dt><dd class="mono">${tx.gatewayTransactionId ?? EMPTY}</dd>
<dt>${t('pay_carrier')}</dt><dd data-carrier="${tx.carrier}">${tx.carrier === 'snap_bi' ? t('pay_carrier_snap_bi') : t('pay_carrier_legacy')}</dd>
<dt>${t('tx_created')}</dt><dd>${v.when(tx.createdAt)}</dd>
${
  paidAt === undefined
    ? html`<dt>${t('pay_expires')}</dt><dd>${v.when(tx.expireAt)}</dd>
<dt>${t('pay_settled')}</dt><dd>${v.when(tx.settlementTime)}</dd>`
    : html`<dt>${t('pay_paid_at')}</dt><dd data-paid-at>${v.when(paidAt)}</dd>`
}
${tx.flags ? html`<dt>${t('pay_flags')}</dt><dd class="mono">${tx.flags}</dd>` : ''}
${tx.paymentLinkOrderId === null ? '' : html`<dt>${t('pay_bought_on')}</dt><dd class="mono"><a href="${txLink(tx.paymentLinkOrderId, tx.account)}" data-bought-on>${tx.paymentLinkOrderId}</a></dd>`}
${usage > 1 ? html`<dt>${t('pay_usage_limit')}</dt><dd data-usage-limit="${usage}">${usage}</dd>` : ''}
</dl>
${
  tx.paymentUrl
    ? html`<div class="copy-row"><label class="inline" for="payment-url">${t('pay_link')}</label><input id="payment-url" readonly value="${tx.paymentUrl}"><button type="button" class="secondary" data-copy="payment-url" data-copied="${t('copied')}">${t('copy_link')}</button></div>`
    : ''
}
${await qrFigure(tx, v)}
</section>
${paymentMoneySection(tx, v)}
</div>
<h2 id="h-actions">${t('pay_actions')}</h2>
<div class="actions" role="group" aria-labelledby="h-actions">
${actionForm(tx, 'check', token, t('pay_check'), t('pay_ask_gateway'))}
${
  !finance
    ? ''
    : offer.refund.ok
      ? actionForm(
          tx,
          'refund',
          token,
          t('pay_refund_title', { amount: rupiah(offer.refund.left) }),
          t('pay_refund_button'),
          html`<label>${t('pay_refund_amount')}<input name="amount" inputmode="decimal" maxlength="24" autocomplete="off" placeholder="50.000"></label><label>${t('pay_refund_reason')}<input name="reason" maxlength="255"></label>`,
          true,
        )
      : offer.refund.why === 'method' || offer.refund.why === 'unsettled'
        ? html`<section class="card" aria-labelledby="a-refund" data-no-refund="${offer.refund.why}"><h3 id="a-refund">${t('pay_refund_not_offered')}</h3><p>${offer.refund.why === 'method' ? t('pay_refund_method', { method: methodInSentence(v, tx.paymentType) }) : t('pay_refund_unsettled')}</p></section>`
        : ''
}
${finance && offer.cancel ? actionForm(tx, 'cancel', token, t('pay_cancel_title'), t('pay_cancel_button'), html``, true) : ''}
${finance && offer.expire ? actionForm(tx, 'expire', token, t('pay_expire_title'), t('pay_expire_button'), html``, true) : ''}
${finance && undelivered.length > 0 ? actionForm(tx, 'retry-deliveries', token, v.plural('pay_retry_title', undelivered.length), t('pay_retry_button'), formKeyField(forms.key(formRequest('retry-deliveries', paymentSubject(tx.orderId, tx.account))))) : ''}
</div>
${purchases === undefined ? '' : purchaseList(purchases, v)}
<h2>${t('pay_timeline')}</h2>
${timelineList(entries, v)}
<p><a href="/console/logs?order_id=${encodeURIComponent(tx.orderId)}">${t('pay_log_lines')}</a></p>`;
}
