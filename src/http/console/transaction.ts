import type { Deps } from '../../types.js';
import type { TransactionRecord } from '../../model/payment.js';
import type { OutboxEvent } from '../../model/delivery.js';
import type { NotificationRecord } from '../../model/notification.js';
import type { DeliveryAttempt } from '../../model/delivery.js';
import type { RefundRecord } from '../../model/refund.js';
import { queryLogs } from '../../platform/logging/query.js';
import { paymentHistory } from '../../domain/queries/payment-history.js';
import { jsonObject } from '../schemas/json-object.js';
import { html, raw, rupiah, type Html } from './html.js';
import { statusBadge } from './layout.js';
import { lastAnswer } from './deliveries.js';
import { EMPTY, type View } from './view.js';
import { DEFAULT_ACCOUNT } from '../../model/account.js';

interface Entry {
  at: string;
  title: Html;
  detail?: Html;
  /** A report that changed the status, and the ERP event of a status change: the one is shown above the other it caused. */
  role?: 'applied-report' | 'status-event';
}

/** How long before the report that caused it its ERP event may be stamped (both are written in one database transaction). */
const CAUSE_WINDOW_MS = 2_000;

/**
 * Oldest first; a status change's ERP event is stamped as the change is decided, a moment before
 * the report that caused it is recorded, so the report is moved above it.
 */
export function timelineOrder(entries: Entry[]): Entry[] {
  const out = [...entries].sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  for (let i = 1; i < out.length; i++) {
    const prev = out[i - 1];
    const cur = out[i];
    if (
      prev?.role === 'status-event' &&
      cur?.role === 'applied-report' &&
      Date.parse(cur.at) - Date.parse(prev.at) <= CAUSE_WINDOW_MS
    ) {
      out[i - 1] = cur;
      out[i] = prev;
    }
  }
  return out;
}

const text = (v: unknown): string | undefined =>
  typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined;

/** Gateway calls made about this order, from the log (the only place they are recorded). */
async function gatewayCalls(services: Deps<'config'>, tx: TransactionRecord, v: View): Promise<Entry[]> {
  try {
    const page = await queryLogs(services.config.logDir, { order_id: tx.orderId, q: 'gateway call', limit: 200 });
    return page.entries.flatMap((e) => {
      const g =
        e.gateway !== null && typeof e.gateway === 'object' ? (e.gateway as Record<string, unknown>) : undefined;
      const at = text(e.time);
      if (!g || !at) return [];
      const outcome = text(g.status) ?? text(g.error) ?? EMPTY;
      const requestId = text(e.request_id);
      return [
        {
          at,
          title: html`${v.t('tl_gateway_call')} <code>${text(g.op) ?? ''}</code> → ${outcome}`,
          detail: html`<code>${text(g.method) ?? ''} ${text(g.path) ?? ''}</code> · ${text(g.duration_ms) ?? EMPTY} ms${requestId ? html` · <a href="/console/logs?request_id=${encodeURIComponent(requestId)}">${v.t('tl_request', { id: requestId.slice(0, 8) })}</a>` : ''}`,
        },
      ];
    });
  } catch {
    return [];
  }
}

/**
 * A report from the gateway: the status it gives in words (not its status code: "201" is just the
 * gateway's code for a pending report), and what paylink did with it in words. A report of the
 * status paylink already had (the first "pending" of a new charge, or a repeat) reads "no change".
 */
/** The actions on this order the audit log names a person for; a refund has its own entry. */
const NAMED_ACTIONS = ['payment_cancel', 'payment_expire', 'link_cancel', 'delivery_retry'] as const;
type NamedAction = (typeof NAMED_ACTIONS)[number];
const isNamed = (a: unknown): a is NamedAction => (NAMED_ACTIONS as readonly unknown[]).includes(a);

/**
 * Who asked for what on this payment, from the audit log (the one record of who acted): cancel,
 * expire, deactivating a link and retrying its ERP deliveries. Lines without an account are of
 * the time before accounts, so `default`'s.
 */
async function auditedActions(services: Deps<'config'>, tx: TransactionRecord, v: View): Promise<Entry[]> {
  try {
    const page = await queryLogs(services.config.logDir, { order_id: tx.orderId, q: '"audit":', limit: 200 });
    return page.entries.flatMap((e) => {
      const a = e.audit !== null && typeof e.audit === 'object' ? (e.audit as Record<string, unknown>) : undefined;
      const at = text(e.time);
      const actor = text(a?.actor);
      if (!a || !at || !actor || !isNamed(a.action) || (text(e.account) ?? DEFAULT_ACCOUNT) !== tx.account) return [];
      return [{ at, title: html`${v.t(`tl_asked_${a.action}`)}`, detail: html`${v.t('tl_by', { actor })}` }];
    });
  } catch {
    return [];
  }
}

function notificationEntry(n: NotificationRecord, v: View): Entry {
  const p = jsonObject(n.payload);
  const refund = text(p.refund_amount);
  const refundRp = refund !== undefined && Number.isFinite(Number(refund)) ? rupiah(Number(refund)) : refund;
  return {
    at: n.receivedAt,
    ...(n.result === 'applied' ? { role: 'applied-report' as const } : {}),
    title: html`${n.source === 'webhook' || n.source === 'replay' ? v.t('tl_notification') : v.t('tl_status_report')}: ${n.transactionStatus ? html`<span data-gateway-status="${n.transactionStatus}">${v.word('gs', n.transactionStatus)}</span>` : EMPTY} <span class="badge r-${n.result}" data-result="${n.result}">${v.word('nr', n.result)}</span>`,
    detail: html`${v.word('src', n.source)} · <span class="mono">${n.gatewayOrderId}</span>${refundRp ? html` · ${v.t('tl_refund_amount', { amount: refundRp })}` : ''}`,
  };
}

function eventEntries(ev: OutboxEvent, attempts: DeliveryAttempt[], v: View): Entry[] {
  const p = jsonObject(ev.payload);
  const refunded =
    typeof p.refunded_amount === 'number' && p.refunded_amount > 0
      ? html` · ${v.t('tl_refunded', { amount: rupiah(p.refunded_amount) })}`
      : '';
  const out: Entry[] = [
    {
      at: ev.createdAt,
      role: 'status-event',
      title: html`${raw(v.t('tl_status_to', { status: statusBadge(v, text(p.status) ?? ev.eventType).text, version: ev.statusVersion ?? EMPTY }))}${refunded}`,
      detail: html`${v.t('tl_erp_event')} <code>${ev.eventId}</code> · ${statusBadge(v, ev.state)}`,
    },
  ];
  for (const a of attempts.filter((x) => x.eventSeq === ev.seq)) {
    out.push({
      at: a.startedAt,
      title: html`${v.t('tl_attempt', { n: a.attemptNo })} ${statusBadge(v, a.outcome)}`,
      detail: html`${a.statusCode === null && !a.error ? v.t('tl_no_answer') : lastAnswer(v, a.statusCode, a.error)} · ${a.latencyMs ?? EMPTY} ms`,
    });
  }
  return out;
}

function refundEntry(r: RefundRecord, v: View): Entry {
  return {
    at: r.createdAt,
    title: html`${v.t('tl_refund_asked', { amount: r.amount === null ? v.t('tl_the_rest') : rupiah(r.amount) })} ${statusBadge(v, r.state)}`,
    detail: html`${v.t('tl_by', { actor: r.actor })}${r.reason ? html` · “${r.reason}”` : ''} · ${v.t('tl_key')} <code>${r.refundKey}</code>${r.gatewayCode ? html` · ${v.t('tl_gateway_code', { code: r.gatewayCode })}` : ''}`,
  };
}

export interface TimelineData {
  entries: Entry[];
  events: OutboxEvent[];
}

export async function timeline(
  services: Deps<'config' | 'store'>,
  tx: TransactionRecord,
  v: View,
): Promise<TimelineData> {
  const [{ notifications, events, attempts, refunds }, calls, asked] = await Promise.all([
    paymentHistory(services, tx),
    gatewayCalls(services, tx, v),
    auditedActions(services, tx, v),
  ]);
  const entries: Entry[] = [
    {
      at: tx.createdAt,
      title: html`${v.t('tl_created', { kind: v.word('kind', tx.kind), amount: rupiah(tx.nominal) })}`,
      detail: html`${v.t('tl_gateway_order_id')} <code>${tx.gatewayOrderId}</code>`,
    },
    ...calls,
    ...asked,
    ...notifications.map((n) => notificationEntry(n, v)),
    ...events.flatMap((e) => eventEntries(e, attempts, v)),
    ...refunds.map((r) => refundEntry(r, v)),
  ];
  return { entries: timelineOrder(entries), events };
}

export function timelineList(entries: Entry[], v: View): Html {
  return html`<ol class="timeline">${entries.map((e) => html`<li><span class="t">${v.when(e.at)}</span>${e.title}${e.detail ? html`<br><span class="muted">${e.detail}</span>` : ''}</li>`)}</ol>`;
}
