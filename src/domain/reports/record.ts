/**
 * The one write path for the outcome of a gateway report. A trusted report is written inside the
 * caller's database transaction, under its transaction's lock: the notification with its result,
 * the change and the ERP event as one step. A notification that could not be confirmed is kept as
 * `unverified` with its reason; one re-checked and found not applicable is marked `ignored`.
 */
import { randomUUID } from 'node:crypto';
import type { ReportWrite, Store } from '../../storage/contract.js';
import type { NewOutboxEvent } from '../../model/delivery.js';
import type { NewNotification, NotificationResult } from '../../model/notification.js';
import type { TransactionPatch, TransactionRecord } from '../../model/payment.js';
import { STATUS_CHANGED, statusChangedEvent } from '../../erp/events.js';
import { currentTraceparent } from '../../platform/tracing.js';
import { eventAccount, orderKeyOf } from '../accounts/events.js';

/** A trusted report about a locked transaction, decided: what to write. */
export interface TrustedOutcome {
  kind: 'trusted';
  /** Written with its final result; `applied` also writes the change's ERP event. */
  notification: NewNotification;
  transaction: TransactionRecord;
  patch: TransactionPatch;
  /** Written instead of `patch` when the same report was recorded before (a duplicate). */
  duplicatePatch: TransactionPatch;
  /** The amount the ERP event states; undefined → the transaction's nominal. */
  grossAmount: number | undefined;
  /** The account the ERP event names (`eventAccount`, decided before the transaction); undefined: none. */
  eventAccount: string | undefined;
  now: Date;
}

/** A notification whose confirmation could not be had: kept for the sweeper, changing nothing. */
export interface UnverifiedOutcome {
  kind: 'unverified';
  notification: NewNotification & { result: 'unverified'; transactionRef: null };
}

/** An unverified notification re-checked and known not to be applicable. */
export interface IgnoredOutcome {
  kind: 'ignored';
  notificationId: number;
  reason: string;
}

export interface RecordedReport {
  result: NotificationResult;
  notificationId: number;
  transaction: TransactionRecord;
  /** Set when an ERP event was written: wake the outbox after the commit. */
  eventId?: string;
}

export interface RecordedUnverified {
  /** `duplicate` when the same notification was recorded before with another result. */
  result: 'unverified' | 'duplicate';
  notificationId: number;
}

/** Records a report's outcome in `db` (a trusted one: the caller's database transaction). */
export function record(db: Store, o: TrustedOutcome): Promise<RecordedReport>;
export function record(db: Store, o: UnverifiedOutcome): Promise<RecordedUnverified>;
export function record(db: Store, o: IgnoredOutcome): Promise<undefined>;
export async function record(
  db: Store,
  o: TrustedOutcome | UnverifiedOutcome | IgnoredOutcome,
): Promise<RecordedReport | RecordedUnverified | undefined> {
  if (o.kind === 'trusted') return recordTrusted(db, o);
  if (o.kind === 'unverified') {
    const rec = await db.notifications.record(o.notification);
    const result = rec.inserted || rec.existing.result === 'unverified' ? 'unverified' : 'duplicate';
    return { result, notificationId: rec.inserted ? rec.id : rec.existing.id };
  }
  await db.notifications.setResult(o.notificationId, { result: 'ignored', reason: o.reason });
  return undefined;
}

/**
 * A trusted report decided over `o.transaction` as read without a lock (its row version
 * `rowVersion`): written in one step that takes the lock itself, only while the row is still that
 * version. `moved`: the row was written since, nothing was; `duplicate`: the dedupe key exists,
 * nothing was written (the locked path tells a resend from an unverified notification confirmed now).
 */
export async function recordIfUnchanged(
  store: Store,
  o: TrustedOutcome,
  rowVersion: string,
): Promise<RecordedReport | 'moved' | 'duplicate'> {
  const { eventId, write } = reportWrite(o);
  const out = await store.reports.recordNewIfUnchanged({ ...write, rowVersion });
  if (out.outcome !== 'written') return out.outcome;
  return { result: o.notification.result, notificationId: out.notificationId, transaction: out.transaction, eventId };
}

/** What a trusted outcome writes: its notification, its change, and (applied) its ERP event. */
function reportWrite(o: TrustedOutcome): { eventId: string | undefined; write: ReportWrite } {
  const { notification, transaction: t, patch, now } = o;
  // The event's payload is built from the transaction as the patch leaves it, so the notification,
  // the change and the event are written in one step (one statement on PostgreSQL).
  const eventId = notification.result === 'applied' ? randomUUID() : undefined;
  const after: TransactionRecord = { ...t, ...definedOnly(patch) };
  const event = eventId
    ? statusChangedOutboxEvent(after, o.grossAmount ?? after.nominal, eventId, now, o.eventAccount)
    : undefined;
  return { eventId, write: { notification, transactionId: t.id, patch, event, now } };
}

async function recordTrusted(db: Store, o: TrustedOutcome): Promise<RecordedReport> {
  const { notification, transaction: t, patch, now } = o;
  const result = notification.result;
  const { eventId, write } = reportWrite(o);
  const written = await db.reports.recordNew(write);
  if (written.inserted)
    return { result, notificationId: written.notificationId, transaction: written.transaction, eventId };
  // The dedupe key exists: a duplicate, or an unverified notification confirmed now (it takes its result).
  const existing = await db.notifications.findByDedupeKey(notification.dedupeKey);
  if (!existing) throw new Error('notification dedupe conflict without a row');
  if (existing.result !== 'unverified') {
    const touched = await db.transactions.update(t.id, o.duplicatePatch);
    return { result: 'duplicate', notificationId: existing.id, transaction: touched };
  }
  await db.notifications.setResult(existing.id, {
    result,
    transactionRef: t.id,
    gatewayTransactionId: notification.gatewayTransactionId,
    reason: null,
  });
  const updated = await db.transactions.update(t.id, patch);
  if (result !== 'applied') return { result, notificationId: existing.id, transaction: updated };
  return {
    result,
    notificationId: existing.id,
    transaction: updated,
    eventId: await enqueueStatusChanged(db, updated, o.grossAmount ?? updated.nominal, now, {
      account: o.eventAccount,
    }),
  };
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
  const out: Record<string, unknown> = {};
  for (const k in patch) {
    const v = (patch as Record<string, unknown>)[k];
    if (v !== undefined) out[k] = v;
  }
  return out as TransactionPatch;
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
    orderKey: orderKeyOf(updated.account, updated.orderId),
    orderId: updated.orderId,
    mercantId: updated.mercantId,
    statusVersion: updated.statusVersion,
    payload: JSON.stringify(statusChangedEvent(updated, grossAmount, eventId, now, account)),
    // Every delivery attempt of the event joins the trace of the report that changed the payment.
    traceContext: currentTraceparent() ?? null,
  };
}
