import type { Services } from '../../types.js';
import type { TransactionRecord } from '../../model/payment.js';
import type { OutboxEvent } from '../../model/delivery.js';
import type { NotificationRecord } from '../../model/notification.js';
import type { DeliveryAttempt } from '../../model/delivery.js';
import type { RefundRecord } from '../../model/refund.js';
import { queryLogs } from '../../logging/query.js';
import { paymentHistory } from '../../domain/payment-history.js';
import { jsonObject } from '../views/json-object.js';
import { html, rupiah, when, type Html } from './html.js';
import { statusBadge } from './layout.js';

interface Entry {
  at: string;
  title: Html;
  detail?: Html;
}

const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined);

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

function notificationEntry(n: NotificationRecord): Entry {
  const p = jsonObject(n.payload);
  const refund = text(p.refund_amount);
  return {
    at: n.receivedAt,
    title: html`${n.source === 'webhook' || n.source === 'replay' ? 'Notification' : 'Status report'} <code>${n.transactionStatus ?? '?'}</code> ${statusBadge(n.result)}`,
    detail: html`${n.source} · code ${n.statusCode ?? '?'} · <span class="mono">${n.gatewayOrderId}</span>${refund ? html` · refund_amount ${refund}` : ''}`,
  };
}

function eventEntries(ev: OutboxEvent, attempts: DeliveryAttempt[], timeZone: string): Entry[] {
  const p = jsonObject(ev.payload);
  const refunded = typeof p.refunded_amount === 'number' ? html` · refunded ${rupiah(p.refunded_amount)}` : '';
  const out: Entry[] = [
    {
      at: ev.createdAt,
      title: html`Status → ${statusBadge(text(p.status) ?? ev.eventType)} (version ${ev.statusVersion ?? '—'})${refunded}`,
      detail: html`ERP event <code>${ev.eventId}</code> · ${statusBadge(ev.state)}`,
    },
  ];
  for (const a of attempts.filter((x) => x.eventSeq === ev.seq)) {
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
  events: OutboxEvent[];
}

export async function timeline(services: Services, tx: TransactionRecord, timeZone: string): Promise<TimelineData> {
  const [{ notifications, events, attempts, refunds }, calls] = await Promise.all([paymentHistory(services, tx), gatewayCalls(services, tx)]);
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
