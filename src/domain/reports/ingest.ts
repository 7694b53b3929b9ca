/**
 * The one pipeline for everything the gateway tells us — webhook, replay, status check, reconcile:
 * in ONE database transaction, record the report (deduplicated), resolve the transaction through
 * the stored gateway order id mapping, apply the status machine and write the outbox event. The
 * outbox worker is woken after the commit. No HTTP call happens inside the transaction.
 */
import { randomUUID } from 'node:crypto';
import type { Deps } from '../../types.js';
import type { Store } from '../../storage/contract.js';
import type { NewOutboxEvent } from '../../model/delivery.js';
import type { NotificationResult, NotificationSource } from '../../model/notification.js';
import type { PaymentStatus, TransactionPatch, TransactionRecord } from '../../model/payment.js';
import { decideTransition, type Decision } from './status-machine.js';
import { mapGatewayStatus, reportIsReversible } from '../../gateway/status.js';
import { dedupeKey, grossToNumber, type GatewayReport } from '../../gateway/report.js';
import { deriveMercantId } from '../orders/ids.js';
import type { TrustedReport } from './trust.js';
import { STATUS_CHANGED, statusChangedEvent } from '../../erp/events.js';
import { eventAccount } from '../accounts/events.js';
import { gatewayTimeToIso } from '../../gateway/time.js';

/** What recording a gateway report needs: the database, the clock, the outbox to wake, metrics and logs. */
export type IngestDeps = Deps<'clock' | 'logger' | 'metrics' | 'outbox' | 'store'>;

export interface IngestOptions {
  /**
   * The notification as it arrived, recorded and deduplicated in place of `report` when `report` is
   * the gateway's confirmation of it. Default: `report` itself.
   */
  received?: GatewayReport;
  /** Apply to this transaction instead of resolving the report's order id (an answer to paylink's own question about it). */
  transaction?: TransactionRecord;
  /** Extra flags recorded on the transaction (e.g. `local_expiry`). */
  flags?: string[];
}

export interface IngestResult {
  result: NotificationResult;
  notificationId: number;
  transaction: TransactionRecord;
  status: PaymentStatus;
  /** Set when an ERP event was written. */
  eventId?: string;
}

const MAX_PAYLOAD = 64 * 1024;

/** Applies `report` — trusted by construction (see report-binding.ts) — and records what arrived. */
export async function ingestGatewayReport(
  services: IngestDeps,
  report: TrustedReport,
  source: NotificationSource,
  opts: IngestOptions = {},
): Promise<IngestResult> {
  // Read before the transaction: a count of a handful of rows, and no lock held while it runs.
  const named = await eventAccount(services.store, services.store.account);
  const run = () =>
    services.store.transaction((tx) => ingestInTransaction(services, tx, report, source, { ...opts, named }));
  let out: IngestResult;
  try {
    out = await run();
  } catch (err) {
    // Two first reports of the same unknown order raced to create it; the loser's transaction rolled back.
    if (!services.store.isUniqueViolation(err)) throw err;
    out = await run();
  }
  if (out.eventId) services.outbox.wake();
  noteReport(services, opts.received ?? report, source, out, report.transaction_status);
  return out;
}

/** The metric and log line of a processed gateway report (also for a duplicate answered without a write). */
export function noteReport(
  services: Deps<'logger' | 'metrics'>,
  report: GatewayReport,
  source: NotificationSource,
  out: Pick<IngestResult, 'result' | 'transaction' | 'status' | 'eventId'>,
  transactionStatus: string | undefined,
): void {
  services.metrics.notifications.inc({ source, result: out.result });
  const log = {
    order_id: out.transaction.orderId,
    gateway_order_id: report.order_id,
    source,
    result: out.result,
    status: out.status,
    transaction_status: transactionStatus,
    event_id: out.eventId,
  };
  if (out.result === 'unknown_status')
    services.logger.warn(
      { ...log, flag: 'unknown_gateway_status' },
      'gateway status not recognised: recorded, not forwarded',
    );
  else services.logger.info(log, 'gateway report processed');
}

async function ingestInTransaction(
  services: Deps<'clock'>,
  tx: Store,
  truth: TrustedReport,
  source: NotificationSource,
  opts: IngestOptions & { named: string | undefined },
): Promise<IngestResult> {
  const now = services.clock.now();
  const nowIso = now.toISOString();
  const report = opts.received ?? truth;
  // Serializes ingestion per transaction (PostgreSQL row lock, taken by the lookup itself where it can be).
  const { t, created } = await lockedTransaction(tx, truth, opts);
  // Decided before the notification is recorded, so it is written once with its result; a
  // duplicate (its dedupe key exists) changes nothing of the decision's.
  const decision = created ? firstDecision(truth) : await decide(tx, t, truth);
  const { patch, result } = patchFor(decision, t, truth, nowIso, opts.flags);
  const notification = {
    dedupeKey: dedupeKey(report),
    gatewayOrderId: report.order_id,
    transactionRef: t.id,
    gatewayTransactionId: truth.transaction_id ?? null,
    transactionStatus: truth.transaction_status ?? null,
    statusCode: report.status_code,
    source,
    result,
    payload: JSON.stringify(report).slice(0, MAX_PAYLOAD),
  };
  const gross = (after: TransactionRecord) => grossToNumber(truth.gross_amount) ?? after.nominal;
  // The event's payload is built from the transaction as the patch leaves it, so the notification,
  // the change and the event are written in one step (one statement on PostgreSQL).
  const eventId = result === 'applied' ? randomUUID() : undefined;
  const after: TransactionRecord = { ...t, ...definedOnly(patch) };
  const event = eventId ? statusChangedOutboxEvent(after, gross(after), eventId, now, opts.named) : undefined;
  const written = await tx.reports.recordNew({ notification, transactionId: t.id, patch, event, now });
  if (written.inserted)
    return {
      result,
      notificationId: written.notificationId,
      transaction: written.transaction,
      status: written.transaction.status,
      eventId,
    };
  // The dedupe key exists: a duplicate, or an unverified notification confirmed now (it takes its result).
  const existing = await tx.notifications.findByDedupeKey(notification.dedupeKey);
  if (!existing) throw new Error('notification dedupe conflict without a row');
  if (existing.result !== 'unverified') {
    const extra = opts.flags ?? [];
    const touched = await tx.transactions.update(t.id, {
      lastEventAt: nowIso,
      ...(extra.length > 0 ? { flags: addFlags(t.flags, extra) } : {}),
    });
    return { result: 'duplicate', notificationId: existing.id, transaction: touched, status: touched.status };
  }
  await tx.notifications.setResult(existing.id, {
    result,
    transactionRef: t.id,
    gatewayTransactionId: truth.transaction_id ?? null,
    reason: null,
  });
  const updated = await tx.transactions.update(t.id, patch);
  if (result !== 'applied')
    return { result, notificationId: existing.id, transaction: updated, status: updated.status };
  return {
    result,
    notificationId: existing.id,
    transaction: updated,
    status: updated.status,
    eventId: await enqueueStatusChanged(tx, updated, gross(updated), now, { account: opts.named }),
  };
}

/**
 * The report's transaction (created when unknown), locked for the rest of the database transaction.
 * Found only by what is signed or confirmed: the report's order id, and the identifiers of a
 * confirmed answer — never by a field a notification carries unsigned.
 */
async function lockedTransaction(
  tx: Store,
  truth: TrustedReport,
  opts: IngestOptions,
): Promise<{ t: TransactionRecord; created: boolean }> {
  if (opts.transaction) {
    const t = await tx.transactions.findForUpdate({ id: opts.transaction.id });
    if (t) return { t, created: false };
  } else {
    // The usual case, the stored mapping, reads and locks in one statement.
    const direct = await tx.transactions.findForUpdate({ gatewayOrderId: truth.order_id });
    if (direct) return { t: direct, created: false };
    const other = await resolveTransaction(tx, truth.order_id, opts.received?.order_id);
    if (other) return { t: (await tx.transactions.findForUpdate({ id: other.id })) ?? other, created: false };
  }
  // A new row is locked by its own insert.
  return { t: await tx.transactions.insert(externalTransaction(truth)), created: true };
}

/**
 * Writes the ERP event for a status change just applied to `updated` (its `statusVersion` already
 * incremented), inside the caller's database transaction. Returns the event id; wake the outbox
 * after the commit.
 */
export async function enqueueStatusChanged(
  tx: Store,
  updated: TransactionRecord,
  grossAmount: number,
  now: Date,
  /** The account the body names (decided by the caller already); looked up when not given. */
  named?: { account: string | undefined },
): Promise<string> {
  const eventId = randomUUID();
  const account = named ? named.account : await eventAccount(tx, updated.account);
  await tx.outbox.enqueue(statusChangedOutboxEvent(updated, grossAmount, eventId, now, account), now);
  return eventId;
}

/** The fields a patch sets (an undefined one leaves the column as it is). */
function definedOnly(patch: TransactionPatch): TransactionPatch {
  return Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
}

/** The outbox record of a status change of `updated`. */
function statusChangedOutboxEvent(
  updated: TransactionRecord,
  grossAmount: number,
  eventId: string,
  now: Date,
  account: string | undefined,
): NewOutboxEvent {
  return {
    eventId,
    eventType: STATUS_CHANGED,
    orderKey: updated.orderId,
    orderId: updated.orderId,
    mercantId: updated.mercantId,
    statusVersion: updated.statusVersion,
    payload: JSON.stringify(statusChangedEvent(updated, grossAmount, eventId, now, account)),
  };
}

/**
 * A purchase on a payment link (`<link gateway id>-<suffix>`) resolves to the link. Some channels
 * report the transaction id in the order id field: a confirmed answer then names the order (found by
 * its mapping), and the signed id is also tried as a gateway transaction id.
 */
async function resolveTransaction(
  tx: Store,
  gatewayOrderId: string,
  signedOrderId: string | undefined,
): Promise<TransactionRecord | undefined> {
  let i = gatewayOrderId.lastIndexOf('-');
  for (let tries = 0; i > 0 && tries < 4; tries++) {
    const base = await tx.transactions.findByGatewayOrderId(gatewayOrderId.slice(0, i));
    if (base?.kind === 'payment_link') return base;
    i = gatewayOrderId.lastIndexOf('-', i - 1);
  }
  if (signedOrderId !== undefined && signedOrderId !== gatewayOrderId) {
    const named = await tx.transactions.findByGatewayOrderId(signedOrderId);
    if (named) return named;
  }
  return tx.transactions.findByGatewayTransactionId(signedOrderId ?? gatewayOrderId);
}

/** An unknown order is accepted and forwarded, named by what the gateway sent. */
function externalTransaction(report: GatewayReport) {
  return {
    id: randomUUID(),
    orderId: report.order_id,
    gatewayOrderId: report.order_id,
    mercantId: deriveMercantId(report.order_id),
    kind: 'external' as const,
    attempt: 1,
    nominal: grossToNumber(report.gross_amount) ?? 0,
    status: 'pending' as const,
    paymentUrl: null,
    paymentLinkId: null,
    snapToken: null,
    requestHash: null,
    requestJson: null,
    gatewayJson: null,
    expireAt: null,
    flags: 'unknown_order',
  };
}

/** The first report of an order we did not know is always forwarded (even `pending`): the ERP learns of it. */
function firstDecision(truth: GatewayReport): Decision {
  const status = mapGatewayStatus(truth.transaction_status, truth.fraud_status);
  return status ? { kind: 'apply', status, newTransaction: true } : { kind: 'unknown_status' };
}

const REFUND_STATUSES: ReadonlySet<PaymentStatus> = new Set(['refunded', 'partially_refunded']);
/** Statuses at which the customer's money reached the gateway: the amount paid is known from then on. */
const MONEY_STATUSES: ReadonlySet<PaymentStatus> = new Set(['paid', 'partially_refunded', 'refunded', 'chargeback']);

/** The cumulative refunded amount a report states, when it is a refund report that states one. */
function reportedRefund(truth: GatewayReport): number | undefined {
  return truth.refund_amount === undefined ? undefined : grossToNumber(truth.refund_amount);
}

async function decide(tx: Store, t: TransactionRecord, truth: GatewayReport): Promise<Decision> {
  const d = await decideByStatus(tx, t, truth);
  // A further partial refund keeps the status but raises the cumulative amount: the ERP must hear of it.
  const refunded = reportedRefund(truth);
  if (
    d.kind === 'duplicate' &&
    !d.adoptTransaction &&
    REFUND_STATUSES.has(d.status) &&
    refunded !== undefined &&
    refunded > t.refundedAmount
  ) {
    return { kind: 'apply', status: d.status, newTransaction: false };
  }
  return d;
}

async function decideByStatus(tx: Store, t: TransactionRecord, truth: GatewayReport): Promise<Decision> {
  const incomingTx = truth.transaction_id ?? null;
  const superseded =
    incomingTx !== null && t.gatewayTransactionId !== null && incomingTx !== t.gatewayTransactionId
      ? await tx.notifications.transactionSeen(t.id, incomingTx)
      : false;
  return decideTransition(
    {
      status: t.status,
      transactionStatus: t.transactionStatus,
      gatewayTransactionId: t.gatewayTransactionId,
      transactionTime: t.transactionTime,
    },
    {
      transactionStatus: truth.transaction_status ?? null,
      fraudStatus: truth.fraud_status ?? null,
      transactionId: incomingTx,
      transactionTime: gatewayTimeToIso(truth.transaction_time),
      superseded,
      reversible: reportIsReversible(truth),
    },
  );
}

function addFlags(current: string | null, add: string[]): string | null {
  const all = new Set([...(current ? current.split(',') : []), ...add].filter((f) => f.length > 0));
  return all.size === 0 ? null : [...all].join(',').slice(0, 1000);
}

function sanitizeFlag(s: string): string {
  return s.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 40);
}

function patchFor(
  d: Decision,
  t: TransactionRecord,
  truth: GatewayReport,
  nowIso: string,
  extraFlags: string[] = [],
): { patch: TransactionPatch; result: NotificationResult } {
  const flags = [...extraFlags];
  if (d.kind === 'unknown_status') {
    flags.push(
      `unknown_status:${sanitizeFlag(truth.transaction_status ?? '(none)')}/${sanitizeFlag(truth.fraud_status ?? '')}`,
    );
    return { patch: { lastEventAt: nowIso, flags: addFlags(t.flags, flags) }, result: 'unknown_status' };
  }
  if (d.kind === 'stale') return { patch: { lastEventAt: nowIso, flags: addFlags(t.flags, flags) }, result: 'stale' };
  if (d.kind === 'duplicate') {
    const patch: TransactionPatch = { lastEventAt: nowIso, flags: addFlags(t.flags, flags) };
    // The first report of a transaction we created (pending link → pending) changes nothing for the ERP but names the gateway transaction.
    if ((d.adoptTransaction || t.gatewayTransactionId === null) && truth.transaction_id) {
      Object.assign(patch, {
        gatewayTransactionId: truth.transaction_id,
        transactionStatus: truth.transaction_status ?? t.transactionStatus,
        paymentType: truth.payment_type ?? t.paymentType,
        transactionTime: gatewayTimeToIso(truth.transaction_time) ?? t.transactionTime,
      });
    }
    return { patch, result: 'duplicate' };
  }
  const gross = grossToNumber(truth.gross_amount);
  const original = truth.original_amount === undefined ? undefined : grossToNumber(truth.original_amount);
  const moneyMoved = MONEY_STATUSES.has(d.status);
  // A customer-imposed fee raises the gross over the order's amount, with the original beside it.
  if (moneyMoved && gross !== undefined && (original ?? gross) !== t.nominal) flags.push('amount_mismatch');
  const sameTx = !d.newTransaction;
  return {
    patch: {
      status: d.status,
      transactionStatus: truth.transaction_status ?? null,
      fraudStatus: truth.fraud_status ?? (sameTx ? t.fraudStatus : null),
      paymentType: truth.payment_type ?? (sameTx ? t.paymentType : null),
      gatewayTransactionId: truth.transaction_id ?? (sameTx ? t.gatewayTransactionId : null),
      transactionTime: gatewayTimeToIso(truth.transaction_time) ?? (sameTx ? t.transactionTime : null),
      settlementTime: gatewayTimeToIso(truth.settlement_time) ?? (sameTx ? t.settlementTime : null),
      statusVersion: t.statusVersion + 1,
      refundedAmount: REFUND_STATUSES.has(d.status)
        ? Math.max(t.refundedAmount, reportedRefund(truth) ?? (d.status === 'refunded' ? t.nominal : 0))
        : t.refundedAmount,
      paidAmount: moneyMoved ? (gross ?? t.paidAmount) : t.paidAmount,
      originalAmount: moneyMoved ? (original ?? t.originalAmount) : t.originalAmount,
      lastEventAt: nowIso,
      gatewayJson: JSON.stringify({ ...truth, signature_key: undefined }),
      flags: addFlags(t.flags, flags),
    },
    result: 'applied',
  };
}
