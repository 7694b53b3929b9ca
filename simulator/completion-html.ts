import type { Lang } from './i18n/index.js';
import { SANDBOX_OTP } from './cards.js';
import { layout, methodLabel, orderSummary, statusLabel, tr } from './html.js';
import { escapeHtml as e } from './lib/format.js';
import type { Txn } from './state.js';

/** The issuer's 3-D Secure challenge: the sandbox OTP passes, anything else fails authentication. */
export function threeDsPage(lang: Lang, tx: Txn, action: string): string {
  const t = tr(lang);
  const masked = typeof tx.fields.masked_card === 'string' ? tx.fields.masked_card : '';
  return layout(
    lang,
    t('3ds.title'),
    `<h1>${e(t('3ds.title'))}</h1>
${orderSummary(tx.order_id, tx.gross_amount, t)}
<p>${e(t('3ds.card'))} <span class="code" id="masked-card">${e(masked)}</span></p>
<form method="post" action="${e(action)}">
<label for="otp">${e(t('3ds.otp'))}</label>
<input id="otp" name="otp" autocomplete="one-time-code" inputmode="numeric">
<p class="muted">${e(t('3ds.sandboxOtp', { otp: SANDBOX_OTP }))}</p>
<button id="submit-otp" type="submit">${e(t('3ds.submit'))}</button>
</form>`,
    tx.merchant_id,
  );
}

/** An internet-banking, pay-later or e-wallet page where the customer approves the payment. */
export function completionPage(lang: Lang, tx: Txn, action: string): string {
  const t = tr(lang);
  const label = methodLabel(tx.method, t);
  return layout(
    lang,
    t('pay.title', { method: label }),
    `<h1>${e(label)}</h1>
${orderSummary(tx.order_id, tx.gross_amount, t)}
<form method="post" action="${e(action)}"><button id="pay" type="submit">${e(t('pay.now'))}</button></form>`,
    tx.merchant_id,
  );
}

const PAID = new Set(['capture', 'settlement']);

/** Where the customer lands once the transaction has left pending. */
export function finishedPage(lang: Lang, tx: Txn): string {
  const t = tr(lang);
  const ok = PAID.has(tx.status) && tx.fraud_status !== 'challenge';
  const text = t(ok ? 'result.success' : tx.fraud_status === 'challenge' ? 'result.review' : 'result.failed');
  // The outcome is said once, in #result; the heading thanks or names the method.
  const heading = ok ? t('result.thanks') : methodLabel(tx.method, t);
  return layout(
    lang,
    text,
    `<h1>${e(heading)}</h1>
<div id="result" data-status="${e(tx.status)}">${e(text)}</div>
${orderSummary(tx.order_id, tx.gross_amount, t)}
<p class="muted">${e(t('result.transaction', { id: tx.transaction_id, status: statusLabel(tx.status, t) }))}</p>`,
    tx.merchant_id,
  );
}
