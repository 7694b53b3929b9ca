import type { Services } from '../../types.js';
import { PAYMENT_STATUSES } from '../../domain/payment-status.js';
import { searchTransactions } from '../../domain/listing.js';
import { html, rupiah, when, zonedInput, type Html } from './html.js';
import { statusBadge, type Alert } from './layout.js';

export interface ListQuery {
  q?: string;
  mercant_id?: string;
  status?: string;
  payment_type?: string;
  from?: string;
  to?: string;
  page?: string;
}

const PAGE_SIZE = 25;
const DAY_MS = 86_400_000;

export function txLink(orderId: string): string {
  return `/console/transactions/${encodeURIComponent(orderId)}`;
}

function pageUrl(query: ListQuery, page: number): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (k !== 'page' && typeof v === 'string' && v !== '') p.set(k, v);
  p.set('page', String(page));
  return `/console/transactions?${p.toString()}`;
}

export async function transactionsBody(services: Services, query: ListQuery, timeZone: string): Promise<{ body: Html; alert?: Alert }> {
  const problems: string[] = [];
  const status = query.status && (PAYMENT_STATUSES as readonly string[]).includes(query.status) ? query.status : undefined;
  if (query.status && !status) problems.push('status: not a payment status');
  const from = query.from ? zonedInput(query.from, timeZone) : undefined;
  if (query.from && !from) problems.push('from: must be a date (YYYY-MM-DD)');
  const toDay = query.to ? zonedInput(query.to, timeZone) : undefined;
  if (query.to && !toDay) problems.push('to: must be a date (YYYY-MM-DD)');
  const page = Math.max(1, Math.min(10_000, Number.parseInt(query.page ?? '1', 10) || 1));
  const { items: rows, more, paymentTypes: types } = await searchTransactions(services, {
    q: query.q?.trim() || undefined,
    mercantId: query.mercant_id?.trim() || undefined,
    status,
    paymentType: query.payment_type || undefined,
    from: from?.toISOString(),
    // "to" names a day: everything created before the next midnight.
    to: toDay ? new Date(toDay.getTime() + DAY_MS).toISOString() : undefined,
    page,
    pageSize: PAGE_SIZE,
  });
  const body = html`
<form class="filters" method="get" action="/console/transactions" role="search">
<label>Order id contains<input name="q" value="${query.q ?? ''}" maxlength="200" autocomplete="off"></label>
<label>mercant_id<input name="mercant_id" value="${query.mercant_id ?? ''}" maxlength="200" autocomplete="off"></label>
<label>Status<select name="status"><option value="">any</option>${PAYMENT_STATUSES.map((s) => html`<option value="${s}"${s === status ? html` selected` : ''}>${s}</option>`)}</select></label>
<label>Payment type<select name="payment_type"><option value="">any</option>${types.map((t) => html`<option value="${t}"${t === query.payment_type ? html` selected` : ''}>${t}</option>`)}</select></label>
<label>Created from<input type="date" name="from" value="${query.from ?? ''}"></label>
<label>Created to<input type="date" name="to" value="${query.to ?? ''}"></label>
<button type="submit">Search</button>
</form>
<div class="table-wrap"><table>
<caption class="muted">Newest first · page ${page}</caption>
<thead><tr><th scope="col">Order id</th><th scope="col" class="hide-narrow">mercant_id</th><th scope="col">Status</th><th scope="col" class="num">Amount</th><th scope="col" class="hide-narrow">Payment type</th><th scope="col">Created</th></tr></thead>
<tbody>${
    rows.length === 0
      ? html`<tr><td colspan="6" class="muted">No transactions match.</td></tr>`
      : rows.map(
          (r) =>
            html`<tr><td><a href="${txLink(r.orderId)}" class="mono">${r.orderId}</a></td><td class="hide-narrow mono">${r.mercantId}</td><td>${statusBadge(r.status)}</td><td class="num">${rupiah(r.nominal)}</td><td class="hide-narrow">${r.paymentType ?? '—'}</td><td>${when(r.createdAt, timeZone)}</td></tr>`,
        )
  }</tbody></table></div>
<nav class="pager" aria-label="Pages">${page > 1 ? html`<a href="${pageUrl(query, page - 1)}" rel="prev">← Newer</a>` : ''}${more ? html`<a href="${pageUrl(query, page + 1)}" rel="next">Older →</a>` : ''}</nav>`;
  return { body, alert: problems.length > 0 ? { kind: 'error', text: 'Some filters were ignored.', items: problems } : undefined };
}
