import type { Services } from '../../types.js';
import { PAYMENT_STATUSES } from '../../domain/payment-status.js';
import { GatewayError } from '../../gateway/errors.js';
import { html, startOfDay, when, type Html } from './html.js';
import { statusBadge } from './layout.js';

const DAY_MS = 86_400_000;
/** A status probe for an order id nobody uses: a 404 answer proves the gateway is reachable and takes our key. */
const PROBE_ID = 'paylink-console-health-probe';

async function gatewayHealth(services: Services): Promise<{ status: string; detail: string }> {
  const started = performance.now();
  try {
    await services.gateway.status(PROBE_ID, { timeoutMs: 2_000 });
    return { status: 'reachable', detail: `answered in ${Math.round(performance.now() - started)} ms` };
  } catch (err) {
    if (err instanceof GatewayError) return { status: err.kind, detail: err.kind === 'refused' ? `answered ${err.statusCode ?? '?'}` : 'no usable answer' };
    throw err;
  }
}

async function databaseHealth(services: Services): Promise<{ status: string; detail: string }> {
  const started = performance.now();
  try {
    await services.store.ping();
    return { status: 'ok', detail: `${services.store.kind}, ${Math.round(performance.now() - started)} ms` };
  } catch {
    return { status: 'unavailable', detail: services.store.kind };
  }
}

export async function overviewBody(services: Services, timeZone: string): Promise<Html> {
  const q = services.store.console;
  const now = services.clock.now();
  const today = startOfDay(now, timeZone);
  const [todayCounts, weekCounts, outbox, oldest, last, db, gateway] = await Promise.all([
    q.countsByStatus(today.toISOString()),
    q.countsByStatus(new Date(today.getTime() - 6 * DAY_MS).toISOString()),
    services.store.outbox.countByState(),
    q.oldestUndelivered(),
    q.lastNotification(),
    databaseHealth(services),
    gatewayHealth(services),
  ]);
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
<dt>Last notification</dt><dd>${last ? html`${when(last.received_at, timeZone)} <span class="muted">(${last.gateway_order_id}, ${last.result})</span>` : 'none yet'}</dd>
<dt>Version</dt><dd>${services.version}</dd>
</dl></section>
</div>`;
}
