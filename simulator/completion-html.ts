import { SANDBOX_OTP } from './cards.js';
import { layout } from './html.js';
import { escapeHtml as e, formatIdr } from './lib/format.js';
import { METHODS } from './methods.js';
import type { Txn } from './state.js';

function summary(t: Txn): string {
  return `<p>Order <strong id="order-id">${e(t.order_id)}</strong></p>
<p class="amount" id="amount">${e(formatIdr(t.gross_amount))}</p>`;
}

/** The issuer's 3-D Secure challenge: the sandbox OTP passes, anything else fails authentication. */
export function threeDsPage(t: Txn, action: string): string {
  const masked = typeof t.fields.masked_card === 'string' ? t.fields.masked_card : '';
  return layout(
    '3D Secure authentication',
    `<h1>3D Secure authentication</h1>
${summary(t)}
<p>Card <span class="code" id="masked-card">${e(masked)}</span></p>
<form method="post" action="${e(action)}">
<label for="otp">One-time password</label>
<input id="otp" name="otp" autocomplete="one-time-code" inputmode="numeric">
<p class="muted">Sandbox OTP: ${SANDBOX_OTP}</p>
<button id="submit-otp" type="submit">OK</button>
</form>`,
  );
}

/** An internet-banking, pay-later or e-wallet page where the customer approves the payment. */
export function completionPage(t: Txn, action: string): string {
  const label = METHODS.get(t.method)?.label ?? t.payment_type;
  return layout(
    `Pay with ${label}`,
    `<h1>${e(label)}</h1>
${summary(t)}
<form method="post" action="${e(action)}"><button id="pay" type="submit">Pay now</button></form>`,
  );
}

const PAID = new Set(['capture', 'settlement']);

/** Where the customer lands once the transaction has left pending. */
export function finishedPage(t: Txn): string {
  const ok = PAID.has(t.status) && t.fraud_status !== 'challenge';
  const text = ok ? 'Payment successful' : t.fraud_status === 'challenge' ? 'Payment under review' : 'Payment failed';
  return layout(
    text,
    `<h1>${e(text)}</h1>
<div id="result" data-status="${e(t.status)}">${e(text)}</div>
${summary(t)}
<p class="muted">Transaction ${e(t.transaction_id)} (${e(t.status)})</p>`,
  );
}
