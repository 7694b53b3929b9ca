/**
 * Where gateway reports come from: a signed notification (webhook or operator replay), or our own
 * question to the status API (status check, reconciler). Every one ends in `ingestGatewayReport`.
 */
import type { Deps } from '../../types.js';
import type { NotificationRecord, NotificationSource } from '../../model/notification.js';
import type { TransactionRecord } from '../../model/payment.js';
import { AppError } from '../../platform/errors.js';
import { mustConfirmNotifications } from '../../config/runtime.js';
import { GatewayError } from '../../gateway/port.js';
import { SIGNED_FIELDS, dedupeKey, parseReport, type GatewayReport } from '../../gateway/report.js';
import type { GatewayAnswer } from '../../gateway/answer.js';
import { ingestGatewayReport, noteReport, type IngestDeps, type IngestResult } from './ingest.js';
import { answerFor, confirmNotification, localExpiry, signedReport, type TrustedReport } from './trust.js';
import { actorName, audit, type Actor } from '../audit.js';

/** A signed notification: verified with the configured server key, confirmed, recorded. */
export type NotificationDeps = RefreshDeps & Deps<'runtimeConfig'>;

/** Asking the gateway, then recording what it says. */
export type RefreshDeps = IngestDeps & Deps<'gateway'>;

export type NotificationOutcome =
  | (IngestResult & { confirmed: boolean })
  | { result: 'unverified' | 'duplicate'; notificationId: number; confirmed: false; reason: string };

/**
 * A notification body: its signature verified by the gateway (Midtrans: SHA-512 over the exact
 * strings, constant time), then — when `gateway.confirm_notifications` is on — confirmed with the
 * status API outside any database transaction: the gateway is asked about the signed order id, and
 * what it answers about that order is what is applied (trust.ts). If the confirmation cannot be had (gateway down, it does
 * not know the order, or it answers about another order or amount), the notification is recorded
 * as `unverified` with the reason, nothing changes, and the answer is still 200: a 5xx would make
 * the gateway retry a notification we already hold, and the reconciler re-checks unverified
 * notifications with the status API until it gets an answer.
 */
export async function handleGatewayNotification(
  services: NotificationDeps,
  raw: Record<string, unknown>,
  source: 'webhook' | 'replay',
): Promise<NotificationOutcome> {
  if (typeof raw.signature_key !== 'string' || raw.signature_key === '')
    throw new AppError('SIGNATURE_INVALID', 'The notification carries no signature_key.');
  const { report, missing, replaced } = parseReport(raw);
  if (!report)
    throw new AppError('VALIDATION_FAILED', 'The notification lacks required fields.', {
      errors: missing.map((m) => ({ path: m, message: 'is required (a string)' })),
    });
  const signedNul = replaced.filter((f) => (SIGNED_FIELDS as readonly string[]).includes(f));
  if (signedNul.length > 0) {
    throw new AppError('VALIDATION_FAILED', 'A signed field contains a NUL character.', {
      errors: signedNul.map((f) => ({ path: f, message: 'must not contain NUL (U+0000)' })),
    });
  }
  if (!(await services.gateway.verifyNotification(report, raw.signature_key)))
    throw new AppError('SIGNATURE_INVALID', 'The notification signature does not verify.');
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
  if (!mustConfirmNotifications(s) && !(await contradictsSignedTwin(services, report))) {
    return { ...(await ingestGatewayReport(services, signedReport(report), source, { flags })), confirmed: false };
  }
  // A resend of a notification already processed is a duplicate whatever the gateway says now
  // (the ingest only notes its arrival): no status API call for it.
  const seen = await services.store.notifications.findByDedupeKey(dedupeKey(report));
  const known =
    seen?.transactionRef && seen.result !== 'unverified' && seen.result !== 'received'
      ? await services.store.transactions.findById(seen.transactionRef)
      : undefined;
  // Nothing to write: its record and effects are durable already.
  if (known && seen) return answerDuplicate(services, report, source, seen.id, known);
  const confirmed = await confirm(services, report);
  if (!confirmed.truth) return recordUnverified(services, report, source, confirmed.reason);
  return {
    ...(await ingestGatewayReport(services, confirmed.truth, source, { received: report, flags })),
    confirmed: true,
  };
}

/** A captured notification, re-run by an operator through the same pipeline: its signature is still verified. */
export async function replayNotification(
  services: NotificationDeps,
  raw: Record<string, unknown>,
  actor: Actor,
): Promise<NotificationOutcome> {
  const outcome = await handleGatewayNotification(services, raw, 'replay');
  const gatewayOrderId = typeof raw.order_id === 'string' ? raw.order_id.slice(0, 100) : null;
  audit(
    services,
    { actor, action: 'webhook_replay', subject: gatewayOrderId, outcome: outcome.result },
    `${actorName(actor)} replayed a notification`,
  );
  return outcome;
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

/**
 * The signature covers only `order_id + status_code + gross_amount`, and a refund carries the same
 * "200" as a settlement: a captured notification with its `transaction_status` (or `fraud_status`)
 * edited still verifies. When confirmation is off (simulator mode only), a report whose signed
 * triple was already seen with another status is therefore never applied on its own word: it goes
 * through the status API like every notification does with confirmation on.
 */
async function contradictsSignedTwin(services: Deps<'store'>, report: GatewayReport): Promise<boolean> {
  const earlier = await services.store.notifications.listForOrder(report.order_id, 200);
  return earlier.some((n) => {
    if (n.statusCode !== report.status_code) return false;
    const twin = parseStored(n.payload);
    if (!twin || twin.gross_amount !== report.gross_amount) return false;
    return (
      (twin.transaction_status ?? '') !== (report.transaction_status ?? '') ||
      (twin.fraud_status ?? '') !== (report.fraud_status ?? '')
    );
  });
}

function parseStored(payload: string): GatewayReport | undefined {
  try {
    const parsed: unknown = JSON.parse(payload);
    return parsed !== null && typeof parsed === 'object'
      ? parseReport(parsed as Record<string, unknown>).report
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * How long a webhook waits for the gateway's status API before answering: the notification is
 * then kept as `unverified` (200) and the reconciler confirms it later, so a slow status API never
 * makes the gateway's own notification time out.
 */
export const CONFIRM_TIMEOUT_MS = 2_000;

type Confirmation =
  { truth: TrustedReport; reason?: undefined } | { truth?: undefined; reason: string; settled: boolean };

const UNKNOWN_TO_GATEWAY = 'the gateway does not know the order';

/**
 * Asks the status API about the notification's SIGNED order id — never its unsigned transaction id —
 * and binds the answer to it (same order, same amount). `settled`: asking again will not change the
 * verdict (the gateway does not know the order, or answers about another one).
 */
async function confirm(services: RefreshDeps, report: GatewayReport): Promise<Confirmation> {
  let st: GatewayAnswer | undefined;
  try {
    st = await services.gateway.status(report.order_id, { timeoutMs: CONFIRM_TIMEOUT_MS });
  } catch (err) {
    if (err instanceof GatewayError) return { reason: `status check failed (${err.kind})`, settled: false };
    throw err;
  }
  if (!st) return { reason: UNKNOWN_TO_GATEWAY, settled: true };
  const bound = confirmNotification(st, report);
  return bound.ok ? { truth: bound.report } : { reason: bound.reason, settled: true };
}

async function recordUnverified(
  services: Deps<'logger' | 'metrics' | 'store'>,
  report: GatewayReport,
  source: NotificationSource,
  reason: string,
): Promise<NotificationOutcome> {
  const rec = await services.store.notifications.record({
    dedupeKey: dedupeKey(report),
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
  });
  const result = rec.inserted || rec.existing.result === 'unverified' ? 'unverified' : 'duplicate';
  services.metrics.notifications.inc({ source, result });
  services.logger.warn(
    { gateway_order_id: report.order_id, source, result, reason },
    'notification not confirmed by the gateway: recorded as unverified for the reconciler',
  );
  return { result, notificationId: rec.inserted ? rec.id : rec.existing.id, confirmed: false, reason };
}

/** Re-asks the gateway about an unverified notification; true when it is settled (applied, or known not to be applicable). */
export async function recheckUnverified(services: RefreshDeps, n: NotificationRecord): Promise<boolean> {
  const report = parseStored(n.payload);
  if (!report || dedupeKey(report) !== n.dedupeKey) {
    await services.store.notifications.setResult(n.id, {
      result: 'ignored',
      reason: 'the stored notification cannot be read back',
    });
    return true;
  }
  const confirmed = await confirm(services, report);
  if (confirmed.truth) {
    await ingestGatewayReport(services, confirmed.truth, 'reconcile', { received: report });
    return true;
  }
  if (!confirmed.settled) return false;
  await services.store.notifications.setResult(n.id, { result: 'ignored', reason: confirmed.reason });
  services.logger.warn(
    { gateway_order_id: report.order_id, reason: confirmed.reason },
    'unverified notification re-checked: not applicable, ignored',
  );
  return true;
}

export interface RefreshOutcome {
  transaction: TransactionRecord;
  /** An ingest result (`applied`, `duplicate`, `stale`, `unknown_status`), or `not_found`, `no_purchase`, `expired_locally`, `answer_mismatch`. */
  outcome: string;
}

/** The newest purchase on a payment link; undefined when the gateway does not know the link. */
export async function newestPurchaseOrderId(
  services: Deps<'gateway'>,
  tx: TransactionRecord,
): Promise<string | null | undefined> {
  const link = await services.gateway.findPaymentLink(tx.gatewayOrderId);
  return link ? link.newestPurchase : undefined;
}

/**
 * Asks the gateway for the transaction's current status and feeds it through the status machine.
 * By gateway transaction id when known, else by gateway order id; payment links through their
 * newest purchase. The answer is applied only when it is about this transaction (report-binding.ts);
 * an answer by transaction id that is about another order is asked again by the order id, so a
 * wrong stored transaction id cannot keep the order from its own status. A pending transaction past
 * its expiry that the gateway does not know (a Snap page or link never used: the status API answers
 * 404) is expired locally, so the ERP still gets `expired`. Gateway failures reject with
 * `GatewayError` (callers map it: 502/504, or retry later).
 */
export async function refreshFromGateway(
  services: RefreshDeps,
  tx: TransactionRecord,
  source: 'status_check' | 'reconcile' = 'status_check',
): Promise<RefreshOutcome> {
  let lookup: string | null = tx.gatewayTransactionId ?? tx.gatewayOrderId;
  if (tx.kind === 'payment_link') {
    const newest = await newestPurchaseOrderId(services, tx);
    if (newest !== undefined) lookup = newest;
  }
  let st = lookup === null ? undefined : await services.gateway.status(lookup);
  let bound = st ? answerFor(st, tx) : undefined;
  const flags: string[] = [];
  if (bound && !bound.ok && lookup === tx.gatewayTransactionId && tx.kind !== 'payment_link') {
    services.logger.warn(
      { order_id: tx.orderId, reason: bound.reason, flag: 'status_answer_mismatch' },
      'status by the stored transaction id answered about another order: asking by the order id',
    );
    flags.push('status_answer_mismatch');
    st = await services.gateway.status(tx.gatewayOrderId);
    bound = st ? answerFor(st, tx) : undefined;
  }
  if (bound?.ok) {
    const r = await ingestGatewayReport(services, bound.report, source, { transaction: tx, flags });
    return { transaction: r.transaction, outcome: r.result };
  }
  if (bound) {
    services.logger.warn(
      { order_id: tx.orderId, reason: bound.reason, flag: 'status_answer_mismatch' },
      'gateway status answer not about this payment: not applied',
    );
    return { transaction: tx, outcome: 'answer_mismatch' };
  }
  const expired = tx.expireAt !== null && Date.parse(tx.expireAt) <= services.clock.now().getTime();
  if (tx.status === 'pending' && expired) {
    const r = await ingestGatewayReport(services, localExpiry(tx), source, {
      transaction: tx,
      flags: ['local_expiry'],
    });
    return { transaction: r.transaction, outcome: r.result === 'applied' ? 'expired_locally' : r.result };
  }
  return { transaction: tx, outcome: lookup === null ? 'no_purchase' : 'not_found' };
}
