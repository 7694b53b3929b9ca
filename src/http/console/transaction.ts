import type { Services } from '../../types.js';
import type { TransactionRecord } from '../../storage/store.js';
import type { DeliveryAttempt, EventRow, NotificationRow, RefundRecord } from '../../storage/store.js';
import { queryLogs } from '../../logging/query.js';
import { html, rupiah, when, type Html } from './html.js';
import { statusBadge } from './layout.js';

interface Entry {
  at: string;
  title: Html;
  detail?: Html;
}

const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined);

function parse(json: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(json);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Gateway calls made about this order, from the log (the only place they are recorded). */
async function gatewayCalls(services: Services, tx: TransactionRecord): Promise<Entry[]> {
  try {
    const page = await queryLogs(services.config.logDir, { order_id: tx.orderId, q: 'gateway call', limit: 200 });
    return page.entries.flatMap((e) => {
      const g = e.gateway !== null && typeof e.gateway === 'object' ? (e.gateway as Record<string, unknown>) : undefined;
      const at = text(e.time);
      if (!g || !at) return [];
      const outcome = text(g.status) ?? text(g.error) ?? '?';
      const requestId = text(e.request_id);
      return [
        {
          at,
          title: html`Gateway call <code>${text(g.op) ?? ''}</code> → ${outcome}`,
          detail: html`<code>${text(g.method) ?? ''} ${text(g.path) ?? ''}</code> · ${text(g.duration_ms) ?? '?'} ms${requestId ? html` · <a href="/console/logs?request_id=${encodeURIComponent(requestId)}">request ${requestId.slice(0, 8)}</a>` : ''}`,
        },
      ];
    });
  } catch {
    return [];
  }
}

function notificationEntry(n: NotificationRow): Entry {
  const p = parse(n.payload);
  const refund = text(p.refund_amount);
  return {
    at: n.received_at,
    title: html`${n.source === 'webhook' || n.source === 'replay' ? 'Notification' : 'Status report'} <code>${n.transaction_status ?? '?'}</code> ${statusBadge(n.result)}`,
    detail: html`${n.source} · code ${n.status_code ?? '?'} · <span class="mono">${n.gateway_order_id}</span>${refund ? html` · refund_amount ${refund}` : ''}`,
  };
}

function eventEntries(ev: EventRow, attempts: DeliveryAttempt[], timeZone: string): Entry[] {
  const p = parse(ev.payload);
  const refunded = typeof p.refunded_amount === 'number' ? html` · refunded ${rupiah(p.refunded_amount)}` : '';
  const out: Entry[] = [
    {
      at: ev.created_at,
      title: html`Status → ${statusBadge(text(p.status) ?? ev.event_type)} (version ${ev.status_version ?? '—'})${refunded}`,
      detail: html`ERP event <code>${ev.event_id}</code> · ${statusBadge(ev.state)}`,
    },
  ];
  for (const a of attempts.filter((x) => x.eventSeq === Number(ev.seq))) {
    out.push({
      at: a.startedAt,
      title: html`ERP delivery attempt ${a.attemptNo} ${statusBadge(a.outcome)}`,
      detail: html`${a.statusCode === null ? 'no answer' : html`HTTP ${a.statusCode}`} · ${a.latencyMs ?? '?'} ms${a.error ? html` · ${a.error}` : ''} <span class="muted">(${when(a.startedAt, timeZone)})</span>`,
    });
  }
  return out;
}

function refundEntry(r: RefundRecord): Entry {
  return {
    at: r.createdAt,
    title: html`Refund asked: ${r.amount === null ? 'the rest' : rupiah(r.amount)} ${statusBadge(r.state)}`,
    detail: html`by ${r.actor}${r.reason ? html` · “${r.reason}”` : ''} · key <code>${r.refundKey}</code>${r.gatewayCode ? html` · gateway ${r.gatewayCode}` : ''}`,
  };
}

export interface TimelineData {
  entries: Entry[];
  events: EventRow[];
}

export async function timeline(services: Services, tx: TransactionRecord, timeZone: string): Promise<TimelineData> {
  const q = services.store.console;
  const [notifications, events, refunds, calls] = await Promise.all([
    q.notificationsFor(tx.id, tx.gatewayOrderId),
    q.eventsForOrder(tx.orderId),
    services.store.refunds.listFor(tx.id),
    gatewayCalls(services, tx),
  ]);
  const attempts = await services.store.outbox.attemptsFor(events.map((e) => Number(e.seq)));
  const entries: Entry[] = [
    { at: tx.createdAt, title: html`Created: ${tx.kind.replace('_', ' ')} for ${rupiah(tx.nominal)}`, detail: html`gateway order id <code>${tx.gatewayOrderId}</code>` },
    ...calls,
    ...notifications.map(notificationEntry),
    ...events.flatMap((e) => eventEntries(e, attempts, timeZone)),
    ...refunds.map(refundEntry),
  ];
  entries.sort((a, b) => a.at.localeCompare(b.at));
  return { entries, events };
}

export function timelineList(entries: Entry[], timeZone: string): Html {
  return html`<ol class="timeline">${entries.map((e) => html`<li><span class="t">${when(e.at, timeZone)}</span>${e.title}${e.detail ? html`<br><span class="muted">${e.detail}</span>` : ''}</li>`)}</ol>`;
}
