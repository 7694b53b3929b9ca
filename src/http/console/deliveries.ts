import type { Deps } from '../../types.js';
import type { OutboxEvent } from '../../model/delivery.js';
import { undeliveredEvents } from '../../domain/queries/listing.js';
import { jsonObject } from '../schemas/json-object.js';
import { html, type Html } from './html.js';
import { statusBadge } from './layout.js';
import { EMPTY, type View } from './view.js';
import { txActionLink, txLink } from './transactions.js';
import type { Actor } from '../../domain/audit.js';
import { accountCell, accountHead, accountSelect, inAccountUrl, paymentSubject, withParam } from './accounts.js';
import { formKeyField, formRequest } from './form-keys.js';
import type { FormTokens } from './context.js';
import { consoleMessages, type ConsoleKey } from './i18n/console.js';

const PAGE = 50;

/**
 * An ERP answer in one piece: `HTTP 500`, then the error only when it says more than the status
 * (the recorded error of a refused delivery is often that same `HTTP 500`); `—` for nothing.
 */
/** A delivery's network failure (as `erp/deliver.ts` names it) in the page's words; anything else as it is. */
function failureWords(v: View, error: string): string {
  const key = `ne_${error
    .trim()
    .replace(/[^a-z]+/gi, '_')
    .replace(/^_|_$/g, '')}`;
  return Object.hasOwn(consoleMessages.en, key) ? v.t(key as ConsoleKey) : error;
}

export function lastAnswer(v: View, statusCode: number | null, error: string | null): Html {
  const code = statusCode === null ? '' : `HTTP ${statusCode}`;
  const err = error && error.trim() !== code ? failureWords(v, error) : '';
  if (!code && !err) return html`${EMPTY}`;
  return html`${code}${code && err ? ' · ' : ''}${err ? html`<span class="muted">${err}</span>` : ''}`;
}

/** One "Retry all" form per order (of its account) on this page: the transaction page's retry-deliveries action. */
function orderRetryForms(rows: OutboxEvent[], forms: FormTokens, v: View): Html {
  const { t } = v;
  const counts = new Map<string, { orderId: string; account: string; n: number }>();
  for (const e of rows) {
    if (!e.orderId) continue;
    const at = paymentSubject(e.orderId, e.account);
    const seen = counts.get(at) ?? { orderId: e.orderId, account: e.account, n: 0 };
    counts.set(at, { ...seen, n: seen.n + 1 });
  }
  if (counts.size === 0 || !forms.may('finance')) return html``;
  return html`<section aria-labelledby="h-by-order"><h2 id="h-by-order">${t('dl_by_order')}</h2><ul class="by-order">${[
    ...counts.values(),
  ].map(
    ({ orderId, account, n }) =>
      html`<li><a class="mono" href="${txLink(orderId, account)}">${orderId}</a> <span class="muted">${v.plural('dl_undelivered_here', n)}</span> <form method="post" action="${txActionLink(orderId, account, 'retry-deliveries')}" class="inline-form"><input type="hidden" name="_csrf" value="${forms.csrf}"><input type="hidden" name="from" value="deliveries">${formKeyField(forms.key(formRequest('retry-deliveries', paymentSubject(orderId, account), { from: 'deliveries' })))}<button type="submit" class="secondary" aria-label="${t('dl_retry_all_label', { order: orderId })}">${t('dl_retry_all')}</button></form></li>`,
  )}</ul></section>`;
}

/** The replay form (finance and admin): a window, optionally one order; its one-time key is good for one replay. */
function replayForm(forms: FormTokens, v: View): Html {
  const { t } = v;
  if (!forms.may('finance')) return html``;
  return html`<section aria-labelledby="h-replay"><h2 id="h-replay">${t('dl_replay')}</h2><p class="muted">${t('dl_replay_intro')}</p>
<form method="post" action="/console/deliveries/replay"><input type="hidden" name="_csrf" value="${forms.csrf}">${formKeyField(forms.key(formRequest('replay', 'deliveries')))}
<label>${t('dl_replay_since')} <input name="since" required maxlength="40" placeholder="2026-11-22T00:00:00+07:00"></label>
<label>${t('dl_replay_until')} <input name="until" maxlength="40"></label>
<label>${t('dl_replay_order')} <input name="order_id" maxlength="255"></label>
<label><input type="checkbox" name="dry_run" value="1"> ${t('dl_replay_dry')}</label>
<button type="submit" class="secondary">${t('dl_replay_submit')}</button></form></section>`;
}

/** Where events are sent, without what could be a secret in it (user info, query, fragment). */
export function shownUrl(url: string | null | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return undefined;
  }
}

/**
 * `scope.account`: only that account's events (every account's the operator may see when absent);
 * `scope.accounts`: the accounts to switch between, when more than one.
 */
export async function deliveriesBody(
  services: Deps<'store' | 'runtimeConfig'>,
  stateParam: string | undefined,
  pageParam: string | undefined,
  v: View,
  forms: FormTokens,
  scope: { actor: Actor; account?: string; accounts: readonly string[] },
): Promise<Html> {
  const { t } = v;
  const { accounts } = scope;
  const account = scope.account || undefined;
  const state = stateParam === 'failed' || stateParam === 'dead' ? stateParam : 'both';
  const page = Math.max(1, Math.min(10_000, Number.parseInt(pageParam ?? '1', 10) || 1));
  const { items: shown, more } = await undeliveredEvents(services, state, page, PAGE, { actor: scope.actor, account });
  // The ERP address of the account shown (`default`'s when the page shows every account).
  const shownConfig =
    account && accounts.includes(account) ? services.runtimeConfig.forAccount(account) : services.runtimeConfig;
  const target = shownUrl((await shownConfig.current()).erp.notify_url);
  const here = (s: string, p?: number) => {
    const base = inAccountUrl('/console/deliveries', account);
    const withState = s === 'both' && p === undefined ? base : withParam(base, 'state', s);
    return p === undefined ? withState : withParam(withState, 'page', String(p));
  };
  const tab = (s: string, label: string) =>
    html`<a href="${here(s)}"${s === state ? html` aria-current="true"` : ''}>${label}</a>`;
  return html`
<p>${t('dl_intro')}</p>
<p data-erp-url>${target ? html`${t('dl_sent_to')} <code>${target}</code>` : t('dl_no_url')}</p>
${accounts.length === 0 ? '' : html`<form class="filters" method="get" action="/console/deliveries">${accountSelect(v, accounts, account)}${state === 'both' ? '' : html`<input type="hidden" name="state" value="${state}">`}<button type="submit">${t('search')}</button></form>`}
<nav class="pager" aria-label="${t('dl_filter')}">${tab('both', t('dl_both'))}${tab('failed', t('dl_failing'))}${tab('dead', t('dl_dead'))}</nav>
${orderRetryForms(shown, forms, v)}
${replayForm(forms, v)}
<div class="table-wrap"><table>
<thead><tr>${accountHead(v, accounts)}<th scope="col">${t('dl_order')}</th><th scope="col">${t('dl_event')}</th><th scope="col">${t('dl_state')}</th><th scope="col" class="num">${t('dl_attempts')}</th><th scope="col" class="hide-narrow">${t('dl_last_answer')}</th><th scope="col" class="hide-narrow">${t('dl_next_attempt')}</th><th scope="col">${t('dl_retry')}</th></tr></thead>
<tbody>${
    shown.length === 0
      ? html`<tr><td colspan="${accounts.length === 0 ? 7 : 8}" class="muted">${t('dl_none')}</td></tr>`
      : shown.map((e) => {
          const reported = jsonObject(e.payload).status;
          const status = typeof reported === 'string' ? reported : e.eventType;
          return html`<tr>${accountCell(accounts, e.account)}
<td>${e.orderId ? html`<a class="mono" href="${txLink(e.orderId, e.account)}">${e.orderId}</a>` : html`<span class="mono">${e.orderKey}</span>`}</td>
<td>${statusBadge(v, status)} <span class="muted">v${e.statusVersion ?? EMPTY}</span></td>
<td>${statusBadge(v, e.state)}</td>
<td class="num">${e.attempts}</td>
<td class="hide-narrow">${lastAnswer(v, e.lastStatusCode, e.lastError)}</td>
<td class="hide-narrow">${e.state === 'dead' ? EMPTY : v.when(e.nextAttemptAt)}</td>
<td>${forms.may('finance') ? html`<form method="post" action="/console/deliveries/${e.eventId}/retry"><input type="hidden" name="_csrf" value="${forms.csrf}">${formKeyField(forms.key(formRequest('retry', e.eventId)))}<button type="submit" class="secondary" aria-label="${t('dl_retry_label', { status: v.word('st', status), order: e.orderId ?? e.orderKey })}">${t('dl_retry_now')}</button></form>` : EMPTY}</td>
</tr>`;
        })
  }</tbody></table></div>
<nav class="pager" aria-label="${t('pages')}">${page > 1 ? html`<a href="${here(state, page - 1)}">${t('previous')}</a>` : ''}${more ? html`<a href="${here(state, page + 1)}">${t('next')}</a>` : ''}</nav>`;
}
