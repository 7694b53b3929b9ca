import type { Services } from '../../types.js';
import type { OutboxEvent } from '../../model/delivery.js';
import { undeliveredEvents } from '../../domain/listing.js';
import { jsonObject } from '../views/json-object.js';
import { html, when, type Html } from './html.js';
import { statusBadge } from './layout.js';
import { txLink } from './transactions.js';

const PAGE = 50;

/** One "Retry all" form per order on this page: the transaction page's retry-deliveries action. */
function orderRetryForms(rows: OutboxEvent[], token: string): Html {
  const counts = new Map<string, number>();
  for (const e of rows) if (e.orderId) counts.set(e.orderId, (counts.get(e.orderId) ?? 0) + 1);
  if (counts.size === 0) return html``;
  return html`<section aria-labelledby="h-by-order"><h2 id="h-by-order">By order</h2><ul class="by-order">${[...counts].map(
    ([orderId, n]) =>
      html`<li><a class="mono" href="${txLink(orderId)}">${orderId}</a> <span class="muted">${n} undelivered here</span> <form method="post" action="${txLink(orderId)}/retry-deliveries" class="inline-form"><input type="hidden" name="_csrf" value="${token}"><input type="hidden" name="from" value="deliveries"><button type="submit" class="secondary" aria-label="Retry all undelivered events of ${orderId}">Retry all</button></form></li>`,
  )}</ul></section>`;
}

export async function deliveriesBody(services: Services, stateParam: string | undefined, pageParam: string | undefined, timeZone: string, token: string): Promise<Html> {
  const state = stateParam === 'failed' || stateParam === 'dead' ? stateParam : 'both';
  const page = Math.max(1, Math.min(10_000, Number.parseInt(pageParam ?? '1', 10) || 1));
  const { items: shown, more } = await undeliveredEvents(services, state, page, PAGE);
  const tab = (s: string, label: string) => html`<a href="/console/deliveries${s === 'both' ? '' : `?state=${s}`}"${s === state ? html` aria-current="true"` : ''}>${label}</a>`;
  return html`
<p>Events the ERP has not accepted yet: <strong>failing</strong> ones are retried with backoff by themselves; <strong>dead</strong> ones (retried for the whole retry window) wait for a hand retry. Later events of the same order wait behind a failing one.</p>
<nav class="pager" aria-label="Filter">${tab('both', 'Failing and dead')}${tab('failed', 'Failing')}${tab('dead', 'Dead')}</nav>
${orderRetryForms(shown, token)}
<div class="table-wrap"><table>
<thead><tr><th scope="col">Order</th><th scope="col">Event</th><th scope="col">State</th><th scope="col" class="num">Attempts</th><th scope="col" class="hide-narrow">Last answer</th><th scope="col" class="hide-narrow">Next attempt</th><th scope="col">Retry</th></tr></thead>
<tbody>${
    shown.length === 0
      ? html`<tr><td colspan="7" class="muted">Nothing is failing. Every event was delivered or is on its way.</td></tr>`
      : shown.map((e) => {
          const reported = jsonObject(e.payload).status;
          const status = typeof reported === 'string' ? reported : e.eventType;
          return html`<tr>
<td>${e.orderId ? html`<a class="mono" href="${txLink(e.orderId)}">${e.orderId}</a>` : html`<span class="mono">${e.orderKey}</span>`}</td>
<td>${statusBadge(status)} <span class="muted">v${e.statusVersion ?? '—'}</span></td>
<td>${statusBadge(e.state)}</td>
<td class="num">${e.attempts}</td>
<td class="hide-narrow">${e.lastStatusCode === null ? '' : html`HTTP ${e.lastStatusCode} `}<span class="muted">${e.lastError ?? ''}</span></td>
<td class="hide-narrow">${e.state === 'dead' ? '—' : when(e.nextAttemptAt, timeZone)}</td>
<td><form method="post" action="/console/deliveries/${e.eventId}/retry"><input type="hidden" name="_csrf" value="${token}"><button type="submit" class="secondary" aria-label="Retry delivery of ${status} for ${e.orderId ?? e.orderKey}">Retry now</button></form></td>
</tr>`;
        })
  }</tbody></table></div>
<nav class="pager" aria-label="Pages">${page > 1 ? html`<a href="/console/deliveries?state=${state}&amp;page=${page - 1}">← Previous</a>` : ''}${more ? html`<a href="/console/deliveries?state=${state}&amp;page=${page + 1}">Next →</a>` : ''}</nav>`;
}
