/**
 * The one way in for every gateway report: a notification (webhook, operator replay), the answer
 * to a status check (status endpoint, sweeper), the answer to a charge, cancel or expire, and the
 * re-check of a notification kept unverified. A notification is verified and, where it must be,
 * confirmed first (verify.ts); only a `TrustedReport` (trust.ts) changes a payment: in ONE database
 * transaction the transaction is resolved through the stored gateway order id mapping (resolve.ts),
 * the status machine decides what changes (apply.ts, status-machine.ts), and the notification, the change and the ERP
 * event are recorded (record.ts), deduplicated by the report's identity (dedupe.ts). On PostgreSQL
 * a transaction found by its stored mapping is read and decided without a lock and recorded by one
 * statement that holds while the row is unchanged, with the same outcome (`unlockedFirst`). The
 * outbox worker is woken after the commit. No HTTP call happens inside the transaction.
 */
import { accountLabel } from '../../model/account.js';
import type { Deps } from '../../types.js';
import type { Store } from '../../storage/contract.js';
import type { NotificationRecord, NotificationResult, NotificationSource } from '../../model/notification.js';
import type { PaymentStatus, TransactionRecord } from '../../model/payment.js';
import { grossToNumber, type GatewayReport } from '../../gateway/report.js';
import { signedReport, type TrustedReport } from './trust.js';
import { confirm, needsConfirmation, verifiedNotification, type CurrentRead } from './verify.js';
import { dedupeKey, processedBefore, sameStoredReport } from './dedupe.js';
import { lockedTransaction } from './resolve.js';
import { record, recordIfUnchanged, type TrustedOutcome } from './record.js';
import { addFlags, decide, firstDecision, patchFor } from './apply.js';
import type { Decision } from './status-machine.js';
import { actorName, audit, type Actor } from '../audit.js';
import { setSpanAttributes } from '../../platform/tracing.js';
import { requireRole } from '../operators/access.js';
import { eventAccount } from '../accounts/events.js';
import { AppError } from '../../platform/errors.js';

/** What recording a gateway report needs: the database, the clock, the outbox to wake, metrics and logs. */
export type IngestDeps = Deps<'clock' | 'logger' | 'metrics' | 'outbox' | 'store'>;

/** A signed notification: verified with the configured server key, confirmed, recorded. */
export type NotificationDeps = IngestDeps & Deps<'gateway' | 'runtimeConfig'>;

export interface IngestOptions {
  /**
   * The notification as it arrived, recorded and deduplicated in place of `report` when `report` is
   * the gateway's confirmation of it. Default: `report` itself.
   */
  received?: GatewayReport;
  /** The dedupe key of what is recorded (`received`, else `report`) when it was computed already. */
  dedupeKey?: string;
  /** Apply to this transaction instead of resolving the report's order id (an answer to paylink's own question about it). */
  transaction?: TransactionRecord;
  /** Extra flags recorded on the transaction (e.g. `local_expiry`). */
  flags?: string[];
  /** The transaction under the report's order id as read after the gateway answered (verify.ts): the unlocked ingest's first read. */
  read?: CurrentRead;
}

export interface IngestResult {
  result: NotificationResult;
  notificationId: number;
  transaction: TransactionRecord;
  status: PaymentStatus;
  /** Set when an ERP event was written. */
  eventId?: string;
}

export type NotificationOutcome =
  | (IngestResult & { confirmed: boolean })
  | { result: 'unverified' | 'duplicate'; notificationId: number; confirmed: false; reason: string };

const MAX_PAYLOAD = 64 * 1024;

/**
 * A notification body: its signature verified (verify.ts), then — when `gateway.confirm_notifications`
 * is on — confirmed with the status API outside any database transaction: the gateway is asked about
 * the signed order id, and what it answers about that order is what is applied (trust.ts). If the
 * confirmation cannot be had (gateway down, it does not know the order, or it answers about another
 * order or amount), the notification is recorded as `unverified` with the reason, nothing changes,
 * and the answer is still 200: a 5xx would make the gateway retry a notification we already hold,
 * and the sweeper re-checks unverified notifications with the status API until it gets an answer.
 */
export async function ingestNotification(
  services: NotificationDeps,
  raw: Record<string, unknown>,
  source: 'webhook' | 'replay',
): Promise<NotificationOutcome> {
  const { report, replaced } = await verifiedNotification(services, raw);
  setSpanAttributes({ 'paylink.gateway_order_id': report.order_id });
  const s = await services.runtimeConfig.current();
  // The signature does not cover merchant_id, but a key shared by mistake must not let one MID's
  // notifications into another account: a known MID must be the one named.
  const mid = s.gateway.merchant_id;
  if (mid !== undefined && raw.merchant_id !== mid)
    throw new AppError('SIGNATURE_INVALID', "The notification names another merchant than this account's.");
  // Unsigned fields carried a NUL (replaced by U+FFFD): accepted (a retry would carry the same
  // bytes), recorded as received, flagged on the order, and never trusted as a lookup key.
  const flags = replaced.length > 0 ? ['nul_in_notification'] : [];
  if (flags.length > 0)
    services.logger.warn(
      { gateway_order_id: report.order_id, fields: replaced, flag: 'nul_in_notification' },
      'gateway notification carried NUL characters in unsigned fields: replaced by U+FFFD',
    );
  if (!(await needsConfirmation(services, s, report))) {
    return { ...(await ingestGatewayReport(services, signedReport(report), source, { flags })), confirmed: false };
  }
  // A resend of a notification already processed is a duplicate whatever the gateway says now
  // (the ingest only notes its arrival): no status API call for it, and nothing to write.
  const key = dedupeKey(report);
  const before = await processedBefore(services, report, key);
  if (before) return answerDuplicate(services, report, source, before.notificationId, before.transaction);
  const confirmed = await confirm(services, report);
  if (!confirmed.truth) return recordUnverified(services, report, source, confirmed.reason, key);
  return {
    ...(await ingestGatewayReport(services, confirmed.truth, source, {
      received: report,
      flags,
      dedupeKey: key,
      read: confirmed.read,
    })),
    confirmed: true,
  };
}

/** A captured notification, re-run by an operator through the same pipeline: its signature is still verified. */
export async function replayNotification(
  services: NotificationDeps,
  raw: Record<string, unknown>,
  actor: Actor,
): Promise<NotificationOutcome> {
  requireRole(actor, 'finance');
  const outcome = await ingestNotification(services, raw, 'replay');
  const gatewayOrderId = typeof raw.order_id === 'string' ? raw.order_id.slice(0, 100) : null;
  audit(
    services,
    { actor, action: 'webhook_replay', subject: gatewayOrderId, outcome: outcome.result },
    `${actorName(actor)} replayed a notification`,
  );
  return outcome;
}

/** Re-asks the gateway about an unverified notification; true when it is settled (applied, or known not to be applicable). */
export async function recheckUnverified(
  services: IngestDeps & Deps<'gateway'>,
  n: NotificationRecord,
): Promise<boolean> {
  const report = sameStoredReport(n);
  if (!report) {
    await record(services.store, {
      kind: 'ignored',
      notificationId: n.id,
      reason: 'the stored notification cannot be read back',
    });
    return true;
  }
  const confirmed = await confirm(services, report);
  if (confirmed.truth) {
    await ingestGatewayReport(services, confirmed.truth, 'reconcile', {
      received: report,
      dedupeKey: n.dedupeKey,
      read: confirmed.read,
    });
    return true;
  }
  if (!confirmed.settled) return false;
  await record(services.store, { kind: 'ignored', notificationId: n.id, reason: confirmed.reason });
  services.logger.warn(
    { gateway_order_id: report.order_id, reason: confirmed.reason },
    'unverified notification re-checked: not applicable, ignored',
  );
  return true;
}

/** Applies `report` — trusted by construction (see trust.ts) — and records what arrived. */
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
  let out = unlockedFirst(services.store, opts)
    ? await ingestUnlocked(services, report, source, { ...opts, named })
    : undefined;
  try {
    out ??= await run();
  } catch (err) {
    // Two first reports of the same unknown order raced to create it; the loser's transaction rolled back.
    if (!services.store.isUniqueViolation(err)) throw err;
    out = await run();
  }
  if (out.eventId) services.outbox.wake();
  setSpanAttributes({
    'paylink.account': services.store.account,
    'paylink.order_id': out.transaction.orderId,
    'paylink.gateway_order_id': (opts.received ?? report).order_id,
    'paylink.event_id': out.eventId,
    'paylink.report_result': out.result,
  });
  noteReport(services, opts.received ?? report, source, out, report.transaction_status);
  return out;
}

/** The metric and log line of a processed gateway report (also for a duplicate answered without a write). */
function noteReport(
  services: Deps<'logger' | 'metrics'>,
  report: GatewayReport,
  source: NotificationSource,
  out: Pick<IngestResult, 'result' | 'transaction' | 'status' | 'eventId'>,
  transactionStatus: string | undefined,
): void {
  services.metrics.notifications.inc({ source, result: out.result, ...accountLabel(out.transaction.account) });
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

/** A resend of a notification already processed: answered from what is stored, with no write. */
function answerDuplicate(
  services: Deps<'logger' | 'metrics'>,
  report: GatewayReport,
  source: NotificationSource,
  notificationId: number,
  t: TransactionRecord,
): NotificationOutcome {
  const out = { result: 'duplicate' as const, notificationId, transaction: t, status: t.status };
  noteReport(services, report, source, out, report.transaction_status);
  return { ...out, confirmed: false };
}

async function recordUnverified(
  services: Deps<'logger' | 'metrics' | 'store'>,
  report: GatewayReport,
  source: NotificationSource,
  reason: string,
  key = dedupeKey(report),
): Promise<NotificationOutcome> {
  const { result, notificationId } = await record(services.store, {
    kind: 'unverified',
    notification: {
      dedupeKey: key,
      gatewayOrderId: report.order_id,
      transactionRef: null,
      // Unsigned and unconfirmed: kept in the payload as it arrived, never as a gateway transaction of ours.
      gatewayTransactionId: null,
      transactionStatus: report.transaction_status ?? null,
      statusCode: report.status_code,
      source,
      result: 'unverified',
      reason,
      payload: JSON.stringify(report),
    },
  });
  services.metrics.notifications.inc({ source, result, ...accountLabel(services.store.account) });
  services.logger.warn(
    { gateway_order_id: report.order_id, source, result, reason },
    'notification not confirmed by the gateway: recorded as unverified for the reconciler',
  );
  return { result, notificationId, confirmed: false, reason };
}

/**
 * How often a report is decided again over its transaction's newer row before it takes the locked
 * path: each try is two round trips (the read, the guarded write), and a row written between them
 * means another report or action about the same payment in that moment.
 */
const UNLOCKED_TRIES = 3;

/**
 * PostgreSQL, a report about a transaction found by its stored gateway order id: read without a
 * lock, decided, and written in one statement that locks the row only while it is still the
 * version read (recordIfUnchanged) — 2 round trips against the locked path's 4 (begin, the lookup
 * with its lock, the write, commit), and no lock held across round trips. Everything the decision
 * and the write read is the row itself, and the notifications `decide` consults, which are only
 * ever written together with a write of the row (so a new one moves its version too). What is
 * not found that way — an order to create, a purchase on a link, an id resolved another way —
 * takes the locked path, as does an answer about a given transaction and a known dedupe key
 * (a resend, or an unverified notification confirmed now). SQLite always takes the locked path:
 * its lock is the group commit's, and a transaction costs no round trip there.
 */
function unlockedFirst(store: Store, opts: IngestOptions): boolean {
  return store.kind === 'postgres' && opts.transaction === undefined;
}

async function ingestUnlocked(
  services: IngestDeps,
  truth: TrustedReport,
  source: NotificationSource,
  opts: IngestOptions & { named: string | undefined },
): Promise<IngestResult | undefined> {
  // A read made for another order id is not this report's (the answer is bound to the signed id, so never in practice).
  let read = opts.read?.gatewayOrderId === truth.order_id ? opts.read : undefined;
  for (let tries = 0; tries < UNLOCKED_TRIES; tries++) {
    const current = read ? read.current : await services.store.reports.findCurrent(truth.order_id);
    read = undefined;
    if (!current) return undefined;
    const t = current.transaction;
    const decision = await decide(services.store, t, truth);
    const outcome = trustedOutcome(services.clock.now(), t, decision, truth, source, opts);
    const out = await recordIfUnchanged(services.store, outcome, current.rowVersion);
    if (out === 'duplicate') return undefined;
    if (out !== 'moved') return { ...out, status: out.transaction.status };
  }
  return undefined;
}

async function ingestInTransaction(
  services: Deps<'clock'>,
  tx: Store,
  truth: TrustedReport,
  source: NotificationSource,
  opts: IngestOptions & { named: string | undefined },
): Promise<IngestResult> {
  const now = services.clock.now();
  // Serializes ingestion per transaction (PostgreSQL row lock, taken by the lookup itself where it can be).
  const { t, created } = await lockedTransaction(tx, truth, {
    transaction: opts.transaction,
    receivedOrderId: opts.received?.order_id,
  });
  // Decided before the notification is recorded, so it is written once with its result; a
  // duplicate (its dedupe key exists) changes nothing of the decision's.
  const decision = created ? firstDecision(truth) : await decide(tx, t, truth);
  const out = await record(tx, trustedOutcome(now, t, decision, truth, source, opts));
  return { ...out, status: out.transaction.status };
}

/** What a trusted report decided over `t` writes. */
function trustedOutcome(
  now: Date,
  t: TransactionRecord,
  decision: Decision,
  truth: TrustedReport,
  source: NotificationSource,
  opts: IngestOptions & { named: string | undefined },
): TrustedOutcome {
  const nowIso = now.toISOString();
  const report = opts.received ?? truth;
  const { patch, result } = patchFor(decision, t, truth, nowIso, opts.flags);
  const extra = opts.flags ?? [];
  return {
    kind: 'trusted',
    notification: {
      dedupeKey: opts.dedupeKey ?? dedupeKey(report),
      gatewayOrderId: report.order_id,
      transactionRef: t.id,
      gatewayTransactionId: truth.transaction_id ?? null,
      transactionStatus: truth.transaction_status ?? null,
      statusCode: report.status_code,
      source,
      result,
      payload: JSON.stringify(report).slice(0, MAX_PAYLOAD),
    },
    transaction: t,
    patch,
    duplicatePatch: { lastEventAt: nowIso, ...(extra.length > 0 ? { flags: addFlags(t.flags, extra) } : {}) },
    grossAmount: grossToNumber(truth.gross_amount),
    eventAccount: opts.named,
    now,
  };
}
