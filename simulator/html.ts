import { createHash } from 'node:crypto';
import { HOSTED, jakartaDateTime, type HostedKey } from './i18n/hosted.js';
import { LANGS, formatRupiah, translator, type Lang, type Translate } from './i18n/index.js';
import { escapeHtml as e } from './lib/format.js';
import type { Item } from './lib/validate.js';
import { METHODS } from './methods.js';
import type { Txn } from './state.js';

const STYLE = `body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;width:100%}td,th{padding:.3rem;border-bottom:1px solid #ddd;text-align:left}
button{display:block;width:100%;margin:.4rem 0;padding:.7rem;font-size:1rem;cursor:pointer}
.amount{font-size:1.6rem;font-weight:bold}.code{font-family:monospace;font-size:1.3rem;word-break:break-all}
#result{color:#0a7a2f;font-size:1.4rem;font-weight:bold}.muted{color:#777}
header{display:flex;justify-content:space-between;gap:1rem;flex-wrap:wrap}nav a,nav span{margin-left:.6rem}
.qr svg{display:block;width:16rem;height:16rem;max-width:100%}.qr-string{font-family:monospace;font-size:.75rem;word-break:break-all;user-select:all}`;

/**
 * The hosted pages' Content-Security-Policy: no scripts, no fetched images or fonts (the QR code is
 * inline SVG markup, which needs no img-src), the one stylesheet by its hash, forms only to this
 * origin. Framing stays allowed: Snap's page is shown in the merchant's pop-up frame.
 */
export const HOSTED_CSP = `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; form-action 'self'; base-uri 'none'`;

export type T = Translate<HostedKey>;

export function tr(lang: Lang): T {
  return translator(HOSTED, lang);
}

/** Links that switch the page's language (`?lang=`, remembered by the cookie); the current one is plain text. */
function langToggle(lang: Lang, t: T): string {
  const items = LANGS.map((l) =>
    l === lang
      ? `<span aria-current="true" lang="${l}">${e(t(`lang.${l}`))}</span>`
      : `<a href="?lang=${l}" hreflang="${l}" lang="${l}" data-lang="${l}">${e(t(`lang.${l}`))}</a>`,
  );
  return `<nav aria-label="${e(t('lang.label'))}">${items.join(' ')}</nav>`;
}

/** A page of one merchant names its MID in the header; the gateway's own error pages name none. */
export function layout(lang: Lang, title: string, body: string, merchantId?: string): string {
  const t = tr(lang);
  const header = merchantId === undefined ? t('header.noMerchant') : t('header', { merchant: merchantId });
  return `<!doctype html><html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${e(title)}</title><style>${STYLE}</style></head><body>
<header><p class="muted" id="merchant">${e(header)}</p>${langToggle(lang, t)}</header>
${body}</body></html>`;
}

/** A method's name: brand names stay as they are, descriptive ones come from the catalogue. */
export function methodLabel(method: string, t: T): string {
  const key = `method.${method}`;
  if (key in HOSTED.en) return t(key as HostedKey);
  return METHODS.get(method)?.label ?? method;
}

export function statusLabel(status: string, t: T): string {
  const key = `status.${status}`;
  return key in HOSTED.en ? t(key as HostedKey) : status;
}

function itemsTable(items: Item[], t: T): string {
  if (items.length === 0) return '';
  const rows = items
    .map(
      (it) =>
        `<tr><td>${e(it.name)}</td><td>${it.quantity}</td><td>${e(formatRupiah(it.price))}</td><td>${e(formatRupiah(it.price * it.quantity))}</td></tr>`,
    )
    .join('');
  const head = (['items.item', 'items.qty', 'items.price', 'items.subtotal'] as const)
    .map((k) => `<th>${e(t(k))}</th>`)
    .join('');
  return `<table><thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table>`;
}

export function orderSummary(orderId: string, amount: number, t: T): string {
  return `<p>${e(t('order'))} <strong id="order-id">${e(orderId)}</strong></p>
<p class="amount" id="amount">${e(formatRupiah(amount))}</p>`;
}

export interface MethodsPageInput {
  merchantId: string;
  /** The merchant's title; without one, the catalogue's "Payment". */
  title?: string | undefined;
  orderId: string;
  amount: number;
  items: Item[];
  methods: string[];
  action: string;
  /** A DYNAMIC_AMOUNT link: the payer enters the amount within these bounds (the page suggests `preset`). */
  openAmount?: { min: number; max: number; preset?: number | undefined } | undefined;
}

/** The amount field of a DYNAMIC_AMOUNT link's page, sent with the chosen method. */
function amountField(o: NonNullable<MethodsPageInput['openAmount']>, t: T): string {
  const label = t('amount.enter', { min: formatRupiah(o.min), max: formatRupiah(o.max) });
  const value = o.preset === undefined ? '' : ` value="${o.preset}"`;
  return `<p><label for="amount">${e(label)}</label><br>
<input type="number" id="amount" name="amount" required min="${o.min}" max="${o.max}" step="1"${value} data-min="${o.min}" data-max="${o.max}"></p>`;
}

export function methodsPage(lang: Lang, p: MethodsPageInput): string {
  const t = tr(lang);
  const title = p.title ?? t('methods.title');
  const buttons = p.methods
    .map(
      (m) =>
        `<button type="submit" name="method" value="${e(m)}" data-method="${e(m)}">${e(methodLabel(m, t))}</button>`,
    )
    .join('\n');
  return layout(
    lang,
    title,
    `<h1>${e(title)}</h1>
${p.openAmount ? `<p>${e(t('order'))} <strong id="order-id">${e(p.orderId)}</strong></p>` : orderSummary(p.orderId, p.amount, t)}
${p.openAmount ? '' : itemsTable(p.items, t)}
<h2>${e(t('methods.choose'))}</h2>
<form method="post" action="${e(p.action)}">
${p.openAmount ? amountField(p.openAmount, t) : ''}${buttons}
</form>`,
    p.merchantId,
  );
}

/**
 * The QRIS code drawn as inline SVG on the server (no image request, nothing for a CSP img-src to
 * allow), with the raw string below it in small type for copying.
 */
export async function qrBlock(qrString: string, t: T): Promise<string> {
  // Loaded on first use: the embedded simulator starts with the service (qrcode: about 60 ms of CPU).
  const { default: QRCode } = await import('qrcode');
  const svg = await QRCode.toString(qrString, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  const labelled = svg.trim().replace(/^<svg /, `<svg role="img" aria-label="${e(t('pay.qrAlt'))}" `);
  return `<div class="qr" id="qr">${labelled}</div>
<p class="muted">${e(t('pay.qrString'))}:<br><span class="qr-string" id="qr-string">${e(qrString)}</span></p>`;
}

async function instructions(tx: Txn, t: T): Promise<string> {
  const f = tx.fields;
  const rows: [string, string][] = [];
  const va = Array.isArray(f.va_numbers) ? f.va_numbers[0] : undefined;
  if (typeof va === 'object' && va !== null && 'va_number' in va) rows.push([t('pay.vaNumber'), String(va.va_number)]);
  if (typeof f.permata_va_number === 'string') rows.push([t('pay.vaNumber'), f.permata_va_number]);
  if (typeof f.bill_key === 'string')
    rows.push([t('pay.billerCode'), String(f.biller_code)], [t('pay.billKey'), f.bill_key]);
  if (typeof f.payment_code === 'string') rows.push([t('pay.paymentCode', { store: String(f.store) }), f.payment_code]);
  if (tx.payment_type === 'credit_card')
    rows.push([t('pay.card'), t('pay.sandboxCard', { number: '4811 1111 1111 1114' })]);
  if (tx.payment_type === 'gopay' || tx.payment_type === 'shopeepay')
    rows.push([t('pay.wallet'), t('pay.approveInApp')]);
  const text = rows.map(([k, v]) => `<p>${e(k)}:<br><span class="code">${e(v)}</span></p>`).join('\n');
  return typeof f.qr_string === 'string' ? `${await qrBlock(f.qr_string, t)}\n${text}` : text;
}

/** "Pay before 24 November 2026, 20:18 WIB" in the page's language. */
export function payBefore(at: Date, lang: Lang): string {
  return tr(lang)('pay.before', jakartaDateTime(at, lang));
}

export async function instructionsPage(lang: Lang, tx: Txn, payAction: string, switchAction?: string): Promise<string> {
  const t = tr(lang);
  const label = methodLabel(tx.method, t);
  const expiry = tx.expiry_time ? `<p class="muted" id="expiry">${e(payBefore(tx.expiry_time, lang))}</p>` : '';
  return layout(
    lang,
    t('pay.title', { method: label }),
    `<h1>${e(label)}</h1>
${orderSummary(tx.order_id, tx.gross_amount, t)}
<div id="instructions">${await instructions(tx, t)}</div>
${expiry}
<form method="post" action="${e(payAction)}"><button id="pay" type="submit">${e(t('pay.now'))}</button></form>
${switchAction === undefined ? '' : `<form method="post" action="${e(switchAction)}"><button id="switch-method" type="submit">${e(t('pay.switch'))}</button></form>`}`,
    tx.merchant_id,
  );
}

export function resultPage(lang: Lang, tx: Txn): string {
  const t = tr(lang);
  return layout(
    lang,
    t('result.success'),
    `<h1>${e(t('result.thanks'))}</h1>
<div id="result">${e(t('result.success'))}</div>
<p>${e(t('order'))} <strong id="order-id">${e(tx.order_id)}</strong> — ${e(formatRupiah(tx.gross_amount))}</p>
<p class="muted" data-status="${e(tx.status)}">${e(t('result.transaction', { id: tx.transaction_id, status: statusLabel(tx.status, t) }))}</p>`,
    tx.merchant_id,
  );
}

/** English unless told: the gateway's own error pages (unknown path, broken form) know no language. */
export function messagePage(title: string, message: string, lang: Lang = 'en', merchantId?: string): string {
  return layout(lang, title, `<h1>${e(title)}</h1><p id="message">${e(message)}</p>`, merchantId);
}
