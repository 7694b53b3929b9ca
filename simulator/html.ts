import { escapeHtml as e, formatIdr, jakartaTime } from './lib/format.js';
import type { Item } from './lib/validate.js';
import { METHODS } from './methods.js';
import type { Txn } from './state.js';

const STYLE = `body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;width:100%}td,th{padding:.3rem;border-bottom:1px solid #ddd;text-align:left}
button{display:block;width:100%;margin:.4rem 0;padding:.7rem;font-size:1rem;cursor:pointer}
.amount{font-size:1.6rem;font-weight:bold}.code{font-family:monospace;font-size:1.3rem;word-break:break-all}
#result{color:#0a7a2f;font-size:1.4rem;font-weight:bold}.muted{color:#777}`;

export function layout(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${e(title)}</title><style>${STYLE}</style></head><body>
<header><p class="muted">Midtrans simulator — Merchant G123456789</p></header>
${body}</body></html>`;
}

function itemsTable(items: Item[]): string {
  if (items.length === 0) return '';
  const rows = items
    .map((it) => `<tr><td>${e(it.name)}</td><td>${it.quantity}</td><td>${e(formatIdr(it.price))}</td><td>${e(formatIdr(it.price * it.quantity))}</td></tr>`)
    .join('');
  return `<table><thead><tr><th>Item</th><th>Qty</th><th>Price</th><th>Subtotal</th></tr></thead><tbody>${rows}</tbody></table>`;
}

export interface MethodsPageInput {
  title: string;
  orderId: string;
  amount: number;
  items: Item[];
  methods: string[];
  action: string;
  notice?: string;
}

export function methodsPage(p: MethodsPageInput): string {
  const buttons = p.methods
    .map((m) => `<button type="submit" name="method" value="${e(m)}" data-method="${e(m)}">${e(METHODS.get(m)?.label ?? m)}</button>`)
    .join('\n');
  return layout(
    p.title,
    `<h1>${e(p.title)}</h1>
<p>Order <strong id="order-id">${e(p.orderId)}</strong></p>
<p class="amount" id="amount">${e(formatIdr(p.amount))}</p>
${itemsTable(p.items)}
${p.notice ? `<p class="muted">${e(p.notice)}</p>` : ''}
<h2>Choose a payment method</h2>
<form method="post" action="${e(p.action)}">
${buttons}
</form>`,
  );
}

function instructions(t: Txn): string {
  const f = t.fields;
  const rows: [string, string][] = [];
  const va = Array.isArray(f.va_numbers) ? f.va_numbers[0] : undefined;
  if (typeof va === 'object' && va !== null && 'va_number' in va) rows.push(['Virtual account number', String(va.va_number)]);
  if (typeof f.permata_va_number === 'string') rows.push(['Virtual account number', f.permata_va_number]);
  if (typeof f.bill_key === 'string') rows.push(['Biller code', String(f.biller_code)], ['Bill key', f.bill_key]);
  if (typeof f.payment_code === 'string') rows.push([`Payment code (${String(f.store)})`, f.payment_code]);
  if (typeof f.qr_string === 'string') rows.push(['QR string', f.qr_string]);
  if (t.payment_type === 'credit_card') rows.push(['Card', 'Sandbox card 4811 1111 1111 1114']);
  if (t.payment_type === 'gopay' || t.payment_type === 'shopeepay') rows.push(['Wallet', 'Approve the payment in the app']);
  return rows.map(([k, v]) => `<p>${e(k)}:<br><span class="code">${e(v)}</span></p>`).join('\n');
}

export function instructionsPage(t: Txn, payAction: string): string {
  const label = METHODS.get(t.method)?.label ?? t.payment_type;
  const expiry = t.expiry_time ? `<p class="muted">Pay before ${e(jakartaTime(t.expiry_time))} WIB</p>` : '';
  return layout(
    `Pay with ${label}`,
    `<h1>${e(label)}</h1>
<p>Order <strong id="order-id">${e(t.order_id)}</strong></p>
<p class="amount" id="amount">${e(formatIdr(t.gross_amount))}</p>
<div id="instructions">${instructions(t)}</div>
${expiry}
<form method="post" action="${e(payAction)}"><button id="pay" type="submit">Pay now</button></form>`,
  );
}

export function resultPage(t: Txn): string {
  return layout(
    'Payment successful',
    `<h1>Thank you</h1>
<div id="result">Payment successful</div>
<p>Order <strong id="order-id">${e(t.order_id)}</strong> — ${e(formatIdr(t.gross_amount))}</p>
<p class="muted">Transaction ${e(t.transaction_id)} (${e(t.status)})</p>`,
  );
}

export function messagePage(title: string, message: string): string {
  return layout(title, `<h1>${e(title)}</h1><p id="message">${e(message)}</p>`);
}
