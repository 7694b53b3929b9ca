import type { Services } from '../../types.js';
import type { TransactionRecord } from '../../model/payment.js';
import { html, rupiah, when, type Html } from './html.js';
import { statusBadge } from './layout.js';
import { timeline, timelineList } from './transaction.js';
import { isUndelivered } from '../../domain/deliveries.js';
import { txLink } from './transactions.js';
import { paymentMoneySection } from './money.js';

function csrfField(token: string): Html {
  return html`<input type="hidden" name="_csrf" value="${token}">`;
}

function actionForm(tx: TransactionRecord, action: string, token: string, title: string, button: Html, fields: Html = html``, danger = false): Html {
  return html`<form method="post" action="${txLink(tx.orderId)}/${action}" aria-labelledby="a-${action}">${csrfField(token)}<h3 id="a-${action}">${title}</h3>${fields}<button type="submit"${danger ? html` class="danger"` : ''}>${button}</button></form>`;
}

export async function transactionBody(services: Services, tx: TransactionRecord, timeZone: string, token: string): Promise<Html> {
  const { entries, events } = await timeline(services, tx, timeZone);
  const left = tx.nominal - tx.refundedAmount;
  const undelivered = events.filter(isUndelivered);
  const refundable = tx.status === 'paid' || tx.status === 'partially_refunded';
  const open = tx.status === 'pending' || tx.status === 'challenge' || (tx.status === 'paid' && tx.transactionStatus === 'capture');
  return html`
<div class="cards">
<section class="card" aria-labelledby="h-summary"><h2 id="h-summary">Payment</h2>
<dl class="kv">
<dt>Order id</dt><dd class="mono">${tx.orderId}</dd>
<dt>mercant_id</dt><dd class="mono">${tx.mercantId}</dd>
<dt>Gateway order id</dt><dd class="mono">${tx.gatewayOrderId}</dd>
<dt>Status</dt><dd data-status="${tx.status}">${statusBadge(tx.status)} <span class="muted">${tx.transactionStatus ?? ''}</span></dd>
<dt>Amount</dt><dd>${rupiah(tx.nominal)}</dd>
<dt>Refunded</dt><dd data-refunded="${tx.refundedAmount}">${rupiah(tx.refundedAmount)}</dd>
<dt>Payment type</dt><dd>${tx.paymentType ?? '—'}</dd>
<dt>Transaction id</dt><dd class="mono">${tx.gatewayTransactionId ?? '—'}</dd>
<dt>Created</dt><dd>${when(tx.createdAt, timeZone)}</dd>
<dt>Expires</dt><dd>${when(tx.expireAt, timeZone)}</dd>
<dt>Settled</dt><dd>${when(tx.settlementTime, timeZone)}</dd>
${tx.flags ? html`<dt>Flags</dt><dd class="mono">${tx.flags}</dd>` : ''}
</dl>
${
  tx.paymentUrl
    ? html`<div class="copy-row"><label class="inline" for="payment-url">Payment link</label><input id="payment-url" readonly value="${tx.paymentUrl}"><button type="button" class="secondary" data-copy="payment-url">Copy link</button></div>`
    : ''
}
</section>
${paymentMoneySection(tx, timeZone, 'en')}
</div>
<h2 id="h-actions">Actions</h2>
<div class="actions" role="group" aria-labelledby="h-actions">
${actionForm(tx, 'check', token, 'Check status now', html`Ask the gateway`)}
${
  refundable
    ? actionForm(
        tx,
        'refund',
        token,
        `Refund (up to ${rupiah(left)})`,
        html`Refund`,
        html`<label>Amount in rupiah (empty = all that is left)<input name="amount" inputmode="numeric" pattern="[0-9]*" maxlength="16" autocomplete="off"></label><label>Reason (optional)<input name="reason" maxlength="255"></label>`,
        true,
      )
    : ''
}
${open ? actionForm(tx, 'cancel', token, 'Cancel the payment', html`Cancel payment`, html``, true) : ''}
${tx.status === 'pending' ? actionForm(tx, 'expire', token, 'Expire the payment now', html`Expire payment`, html``, true) : ''}
${undelivered.length > 0 ? actionForm(tx, 'retry-deliveries', token, `Retry ${undelivered.length} undelivered ERP event(s)`, html`Retry delivery`) : ''}
</div>
<h2>Timeline</h2>
${timelineList(entries, timeZone)}
<p><a href="/console/logs?order_id=${encodeURIComponent(tx.orderId)}">Log lines of this order</a></p>`;
}
