import type { Deps } from '../../types.js';
import { PAYMENT_STATUSES } from '../../domain/reports/status-machine.js';
import { searchTransactions, type ConsoleSearch } from '../../domain/queries/listing.js';
import { html, rupiah, zonedInput, type Html } from './html.js';
import { statusBadge, type Alert } from './layout.js';
import { EMPTY, type View } from './view.js';
import type { Actor } from '../../domain/audit.js';
import { accountCell, accountHead, accountSelect, inAccountUrl } from './accounts.js';

export interface ListQuery {
  q?: string;
  mercant_id?: string;
  status?: string;
  payment_type?: string;
  from?: string;
  to?: string;
  /** Only this account's payments; every account's the operator may see when absent. */
  account?: string;
  page?: string;
}

const PAGE_SIZE = 25;
const DAY_MS = 86_400_000;

/** The page of a payment of `account` (`default` when absent). */
export function txLink(orderId: string, account?: string): string {
  return inAccountUrl(`/console/transactions/${encodeURIComponent(orderId)}`, account);
}

/** Where a payment page's form posts `action`. */
export function txActionLink(orderId: string, account: string | undefined, action: string): string {
  return inAccountUrl(`/console/transactions/${encodeURIComponent(orderId)}/${action}`, account);
}

function pageUrl(query: ListQuery, page: number): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (k !== 'page' && typeof v === 'string' && v !== '') p.set(k, v);
  p.set('page', String(page));
  return `/console/transactions?${p.toString()}`;
}

/** The page's filters as the console's search takes them, and what was wrong with any of them (ignored). */
export function searchOf(
  query: ListQuery,
  v: View,
): { search: Omit<ConsoleSearch, 'page' | 'pageSize'> & { account?: string }; problems: string[] } {
  const { t, timeZone } = v;
  const problems: string[] = [];
  const status =
    query.status && (PAYMENT_STATUSES as readonly string[]).includes(query.status) ? query.status : undefined;
  if (query.status && !status) problems.push(t('tx_bad_status'));
  const from = query.from ? zonedInput(query.from, timeZone) : undefined;
  if (query.from && !from) problems.push(t('tx_bad_from'));
  const toDay = query.to ? zonedInput(query.to, timeZone) : undefined;
  if (query.to && !toDay) problems.push(t('tx_bad_to'));
  return {
    search: {
      q: query.q?.trim() || undefined,
      mercantId: query.mercant_id?.trim() || undefined,
      status,
      paymentType: query.payment_type || undefined,
      from: from?.toISOString(),
      // "to" names a day: everything created before the next midnight.
      to: toDay ? new Date(toDay.getTime() + DAY_MS).toISOString() : undefined,
      account: query.account || undefined,
    },
    problems,
  };
}

/** `scope.accounts`: the accounts to switch between, when more than one (see `switchableAccounts`). */
export async function transactionsBody(
  services: Deps<'store'>,
  query: ListQuery,
  v: View,
  scope: { actor: Actor; accounts: readonly string[] },
): Promise<{ body: Html; alert?: Alert }> {
  const { accounts } = scope;
  const { t } = v;
  const { search, problems } = searchOf(query, v);
  const status = search.status;
  const page = Math.max(1, Math.min(10_000, Number.parseInt(query.page ?? '1', 10) || 1));
  const {
    items: rows,
    more,
    paymentTypes: types,
  } = await searchTransactions(services, { ...search, page, pageSize: PAGE_SIZE }, scope.actor);
  const body = html`
<form class="filters" method="get" action="/console/transactions" role="search">
${accountSelect(v, accounts, query.account)}
<label>${t('tx_order_contains')}<input name="q" value="${query.q ?? ''}" maxlength="200" autocomplete="off"></label>
<label>mercant_id<input name="mercant_id" value="${query.mercant_id ?? ''}" maxlength="200" autocomplete="off"></label>
<label>${t('tx_status')}<select name="status"><option value="">${t('any')}</option>${PAYMENT_STATUSES.map((s) => html`<option value="${s}"${s === status ? html` selected` : ''}>${v.word('st', s)}</option>`)}</select></label>
<label>${t('tx_payment_type')}<select name="payment_type"><option value="">${t('any')}</option>${types.map((p) => html`<option value="${p}"${p === query.payment_type ? html` selected` : ''}>${v.word('pt', p)}</option>`)}</select></label>
<label>${t('tx_created_from')}<input type="date" name="from" value="${query.from ?? ''}"></label>
<label>${t('tx_created_to')}<input type="date" name="to" value="${query.to ?? ''}"></label>
<button type="submit">${t('search')}</button>
</form>
<div class="table-wrap"><table class="tx-list">
<caption class="muted">${t('tx_caption', { page })}</caption>
<thead><tr>${accountHead(v, accounts)}<th scope="col">${t('tx_order_id')}</th><th scope="col" class="hide-narrow">mercant_id</th><th scope="col">${t('tx_status')}</th><th scope="col" class="num">${t('tx_amount')}</th><th scope="col" class="hide-narrow">${t('tx_payment_type')}</th><th scope="col">${t('tx_created')}</th></tr></thead>
<tbody>${
    rows.length === 0
      ? html`<tr><td colspan="${accounts.length === 0 ? 6 : 7}" class="muted">${t('tx_none')}</td></tr>`
      : rows.map(
          (r) =>
            html`<tr>${accountCell(accounts, r.account)}<td><a href="${txLink(r.orderId, r.account)}" class="mono">${r.orderId}</a></td><td class="hide-narrow mono">${r.mercantId}</td><td>${statusBadge(v, r.status)}</td><td class="num">${rupiah(r.nominal)}</td><td class="hide-narrow">${r.paymentType ? v.word('pt', r.paymentType) : EMPTY}</td><td>${v.when(r.createdAt)}</td></tr>`,
        )
  }</tbody></table></div>
<nav class="pager" aria-label="${t('pages')}">${page > 1 ? html`<a href="${pageUrl(query, page - 1)}" rel="prev">${t('newer')}</a>` : ''}${more ? html`<a href="${pageUrl(query, page + 1)}" rel="next">${t('older')}</a>` : ''}</nav>`;
  return {
    body,
    alert: problems.length > 0 ? { kind: 'error', text: t('tx_filters_ignored'), items: problems } : undefined,
  };
}
