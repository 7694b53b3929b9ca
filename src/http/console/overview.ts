import type { Deps } from '../../types.js';
import { PAYMENT_STATUSES } from '../../domain/reports/status-machine.js';
import { overview } from '../../domain/queries/overview.js';
import { html, startOfDay, type Html } from './html.js';
import { statusBadge } from './layout.js';
import { EMPTY, type View } from './view.js';
import { overviewMoneySection } from './money.js';
import { firingAlerts } from '../../domain/alerts/alerts.js';
import type { Actor } from '../../domain/audit.js';

const DAY_MS = 86_400_000;

/** What `actor` may see of it: an operator limited to some accounts sees those accounts' figures only. */
export async function overviewBody(
  services: Deps<'clock' | 'gateway' | 'store' | 'version'>,
  v: View,
  actor: Actor,
): Promise<Html> {
  const { t } = v;
  const today = startOfDay(services.clock.now(), v.timeZone);
  const o = await overview(services, { today, week: new Date(today.getTime() - 6 * DAY_MS) }, actor);
  const { today: todayCounts, week: weekCounts } = o.counts;
  const { outbox, oldestUndelivered: oldest, lastNotification: last, gateway } = o;
  const db = {
    status: o.database.ok ? 'ok' : 'unavailable',
    detail: o.database.ok ? `${o.database.kind}, ${o.database.latencyMs} ms` : o.database.kind,
  };
  const statuses = PAYMENT_STATUSES.filter(
    (s) => (weekCounts[s] ?? 0) > 0 || ['pending', 'paid', 'expired'].includes(s),
  );
  const total = (c: Record<string, number>) => Object.values(c).reduce((a, b) => a + b, 0);
  return html`${await overviewAlerts(services, v, actor)}
<div class="cards">
<section class="card" aria-labelledby="h-counts"><h2 id="h-counts">${t('ov_by_status')}</h2>
<div class="table-wrap"><table class="counts"><thead><tr><th scope="col">${t('ov_status')}</th><th scope="col" class="num">${t('ov_today')}</th><th scope="col" class="num">${t('ov_week')}</th></tr></thead>
<tbody>${statuses.map((s) => html`<tr><td><a href="/console/transactions?status=${s}">${statusBadge(v, s)}</a></td><td class="num" data-count="today-${s}">${todayCounts[s] ?? 0}</td><td class="num" data-count="week-${s}">${weekCounts[s] ?? 0}</td></tr>`)}
<tr><th scope="row">${t('ov_all')}</th><td class="num" data-count="today-all">${total(todayCounts)}</td><td class="num" data-count="week-all">${total(weekCounts)}</td></tr></tbody></table></div>
</section>
<section class="card" aria-labelledby="h-erp"><h2 id="h-erp">${t('ov_erp')}</h2>
<dl class="kv">
<dt>${t('ov_waiting')}</dt><dd data-count="waiting">${outbox.pending}</dd>
<dt>${t('ov_failing')}</dt><dd data-count="failing">${outbox.failed > 0 ? html`<a href="/console/deliveries?state=failed">${outbox.failed}</a>` : '0'}</dd>
<dt>${t('ov_dead')}</dt><dd data-count="dead">${outbox.dead > 0 ? html`<a href="/console/deliveries?state=dead">${outbox.dead}</a>` : '0'}</dd>
<dt>${t('ov_delivered')}</dt><dd data-count="delivered">${outbox.delivered}</dd>
<dt>${t('ov_oldest')}</dt><dd>${v.when(oldest)}</dd>
</dl></section>
<section class="card" aria-labelledby="h-health"><h2 id="h-health">${t('ov_health')}</h2>
<dl class="kv">
<dt>${t('ov_database')}</dt><dd>${statusBadge(v, db.status)} ${db.detail}</dd>
<dt>${t('ov_gateway')}</dt><dd>${statusBadge(v, gateway.status)}</dd>
<dt>${t('ov_last_notification')}</dt><dd>${last ? html`${v.when(last.receivedAt)} <span class="muted">(${last.gatewayOrderId}, ${v.word('nr', last.result)})</span>` : EMPTY}</dd>
<dt>${t('ov_version')}</dt><dd>${services.version}</dd>
</dl></section>
</div>
${await overviewMoneySection(services, v, actor)}`;
}

/** What is firing now (nothing shown when nothing is): each alert with its subject and since when. */
export async function overviewAlerts(services: Deps<'store'>, v: View, actor: Actor): Promise<Html> {
  const firing = await firingAlerts(services, undefined, actor);
  if (firing.length === 0) return html``;
  return html`<section class="card" aria-labelledby="h-alerts" data-alerts="${firing.length}"><h2 id="h-alerts">${v.t('ov_alerts')}</h2>
<ul>${firing.map((a) => html`<li data-alert="${a.alert}">${statusBadge(v, 'failed')} <strong>${a.alert}</strong> <span class="muted">${a.account}</span> ${a.summary} <span class="muted">(${a.subject}, ${v.when(a.startedAt)})</span></li>`)}</ul>
</section>`;
}
