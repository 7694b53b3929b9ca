import type { Services } from '../../types.js';
import { PAYMENT_STATUSES } from '../../domain/payment-status.js';
import { overview } from '../../domain/overview.js';
import { html, startOfDay, when, type Html } from './html.js';
import { statusBadge } from './layout.js';
import { overviewMoneySection } from './money.js';

const DAY_MS = 86_400_000;

export async function overviewBody(services: Services, timeZone: string): Promise<Html> {
  const today = startOfDay(services.clock.now(), timeZone);
  const o = await overview(services, { today, week: new Date(today.getTime() - 6 * DAY_MS) });
  const { today: todayCounts, week: weekCounts } = o.counts;
  const { outbox, oldestUndelivered: oldest, lastNotification: last, gateway } = o;
  const db = { status: o.database.ok ? 'ok' : 'unavailable', detail: o.database.ok ? `${o.database.kind}, ${o.database.latencyMs} ms` : o.database.kind };
  const statuses = PAYMENT_STATUSES.filter((s) => (weekCounts[s] ?? 0) > 0 || ['pending', 'paid', 'expired'].includes(s));
  const total = (c: Record<string, number>) => Object.values(c).reduce((a, b) => a + b, 0);
  return html`
<div class="cards">
<section class="card" aria-labelledby="h-counts"><h2 id="h-counts">Payments by status</h2>
<div class="table-wrap"><table><thead><tr><th scope="col">Status</th><th scope="col" class="num">Today</th><th scope="col" class="num">Last 7 days</th></tr></thead>
<tbody>${statuses.map((s) => html`<tr><td><a href="/console/transactions?status=${s}">${statusBadge(s)}</a></td><td class="num" data-count="today-${s}">${todayCounts[s] ?? 0}</td><td class="num" data-count="week-${s}">${weekCounts[s] ?? 0}</td></tr>`)}
<tr><th scope="row">All</th><td class="num" data-count="today-all">${total(todayCounts)}</td><td class="num" data-count="week-all">${total(weekCounts)}</td></tr></tbody></table></div>
</section>
<section class="card" aria-labelledby="h-erp"><h2 id="h-erp">ERP delivery</h2>
<dl class="kv">
<dt>Waiting</dt><dd data-count="waiting">${outbox.pending}</dd>
<dt>Failing</dt><dd data-count="failing">${outbox.failed > 0 ? html`<a href="/console/deliveries?state=failed">${outbox.failed}</a>` : '0'}</dd>
<dt>Dead</dt><dd data-count="dead">${outbox.dead > 0 ? html`<a href="/console/deliveries?state=dead">${outbox.dead}</a>` : '0'}</dd>
<dt>Delivered</dt><dd data-count="delivered">${outbox.delivered}</dd>
<dt>Oldest undelivered</dt><dd>${oldest ? when(oldest, timeZone) : 'none'}</dd>
</dl></section>
<section class="card" aria-labelledby="h-health"><h2 id="h-health">Health</h2>
<dl class="kv">
<dt>Database</dt><dd>${statusBadge(db.status)} ${db.detail}</dd>
<dt>Gateway</dt><dd>${statusBadge(gateway.status)} ${gateway.detail}</dd>
<dt>Last notification</dt><dd>${last ? html`${when(last.receivedAt, timeZone)} <span class="muted">(${last.gatewayOrderId}, ${last.result})</span>` : 'none yet'}</dd>
<dt>Version</dt><dd>${services.version}</dd>
</dl></section>
</div>
${await overviewMoneySection(services, timeZone, 'en')}`;
}
