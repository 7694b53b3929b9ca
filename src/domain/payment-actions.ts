/**
 * Refund, cancel and expire at the gateway, for the ERP (API key) and for operators (console).
 * The local status is never set from the request: it moves only when the gateway's answer or its
 * status API says so, through the same status machine as notifications, so the ERP hears of each
 * change once and in order through the outbox.
 */
import { randomUUID } from 'node:crypto';
import type { Deps } from '../types.js';
import type { PaymentStatus, TransactionRecord } from '../storage/store.js';
import { AppError, type ErrorCode } from '../errors.js';
import { GatewayError } from '../gateway/errors.js';
import type { CoreResponse } from '../gateway/wire.js';
import { reportFromStatus, wireAmount } from '../gateway/report.js';
import { gatewayPhase } from '../gateway/status.js';
import { ingestGatewayReport, enqueueStatusChanged } from './notifications.js';
import { newestPurchaseOrderId, refreshFromGateway } from './notification-sources.js';
import { findTransaction } from './payment-links.js';
import type { RefreshDeps } from './notification-sources.js';
import type { RefundInput } from './inputs.js';

/** Who asked: the ERP through an API key, or an operator by name. Written to the audit log and kept with refunds. */
export type Actor = { kind: 'api' } | { kind: 'operator'; user: string };

const actorName = (a: Actor) => (a.kind === 'api' ? 'api' : `operator:${a.user}`);

function audit(services: Deps<'logger'>, actor: Actor, action: string, tx: TransactionRecord, extra: Record<string, unknown> = {}): void {
  const who = actor.kind === 'operator' ? { operator: actor.user } : { actor: 'api' };
  services.logger.info({ audit: `payment_${action}`, ...who, order_id: tx.orderId, mercant_id: tx.mercantId, status: tx.status, ...extra }, `${actorName(actor)} asked to ${action} ${tx.orderId}`);
}

function stateConflict(code: ErrorCode, tx: TransactionRecord, action: string): AppError {
  return new AppError(code, `${tx.orderId} is ${tx.status}: it cannot be ${action}.`, { data: { payment_status: tx.status } });
}

async function mustFind(services: Deps<'store'>, id: string): Promise<TransactionRecord> {
  const tx = await findTransaction(services, id);
  if (!tx) throw new AppError('NOT_FOUND', `No payment ${JSON.stringify(id)}.`);
  return tx;
}

/** The gateway id to act on: a payment link's newest purchase, else the current gateway transaction, else the order id. */
async function gatewayTarget(services: Deps<'gateway'>, tx: TransactionRecord): Promise<string | null> {
  if (tx.kind === 'payment_link') {
    const newest = await newestPurchaseOrderId(services, tx);
    if (newest !== undefined) return newest;
    return tx.gatewayTransactionId;
  }
  return tx.gatewayTransactionId ?? tx.gatewayOrderId;
}

const MONEY_MOVED: ReadonlySet<PaymentStatus> = new Set(['paid', 'partially_refunded', 'refunded', 'chargeback']);

function refundConflict(tx: TransactionRecord): AppError | undefined {
  if (tx.status === 'paid' || tx.status === 'partially_refunded') return undefined;
  if (tx.status === 'refunded' || tx.status === 'chargeback') return stateConflict('PAYMENT_CLOSED', tx, 'refunded');
  return stateConflict('PAYMENT_NOT_PAID', tx, 'refunded');
}

/**
 * Refunds all or part of a paid payment. The request is kept with its `refund_key` before the
 * gateway is called; while its outcome is unknown (timeout, crash), a refund of the same amount
 * sends the same key again, and the gateway answers with that first refund instead of a second one.
 */
export async function refundPayment(services: RefreshDeps, id: string, input: RefundInput, actor: Actor): Promise<TransactionRecord> {
  const tx = await mustFind(services, id);
  const refunds = services.store.refunds;
  const requested = input.amount ?? null;
  const open = await refunds.findOpen(tx.id, requested);
  if (!open) {
    const conflict = refundConflict(tx);
    if (conflict) throw conflict;
    const left = tx.nominal - tx.refundedAmount;
    if (requested !== null && (requested <= 0 || requested > left)) {
      throw new AppError('AMOUNT_INVALID', `amount must be between 1 and ${left} (what is left of ${tx.nominal}).`, { errors: [{ path: 'amount', message: `must be between 1 and ${left}` }] });
    }
  }
  const target = await gatewayTarget(services, tx);
  if (target === null) throw stateConflict('PAYMENT_NOT_PAID', tx, 'refunded');
  const rec = open ?? (await refunds.insert({ id: randomUUID(), transactionRef: tx.id, refundKey: `rf-${randomUUID().replace(/-/g, '')}`, amount: requested, reason: input.reason ?? null, actor: actorName(actor) }));
  audit(services, actor, 'refund', tx, { amount: requested ?? 'rest', reason: input.reason, refund_key: rec.refundKey, retry_of_open_request: open !== undefined });
  try {
    const res = await services.gateway.refund(target, { refund_key: rec.refundKey, ...(requested === null ? {} : { amount: requested }), ...(input.reason === undefined ? {} : { reason: input.reason }) });
    await refunds.settle(rec.id, 'approved', res.status_code);
  } catch (err) {
    if (err instanceof GatewayError && err.kind === 'refused') await refunds.settle(rec.id, 'refused', err.statusCode ?? null);
    throw err;
  }
  return confirm(services, tx);
}

/** The refund answer names this refund's amount only: the status API's cumulative one is what the ERP gets. */
async function confirm(services: RefreshDeps, tx: TransactionRecord): Promise<TransactionRecord> {
  try {
    return (await refreshFromGateway(services, tx)).transaction;
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    // The gateway accepted the action; its notification (or the next status check) brings the change.
    services.logger.warn({ order_id: tx.orderId, error: err.kind }, 'status check after a gateway action failed: waiting for the notification');
    return (await services.store.transactions.findById(tx.id)) ?? tx;
  }
}

function closeConflict(tx: TransactionRecord, action: 'cancelled' | 'expired'): AppError | undefined {
  // A challenged payment is the gateway's to judge: it answers with its own refusal where it must.
  if (tx.status === 'pending' || tx.status === 'challenge') return undefined;
  // A captured card payment can still be voided until it settles.
  if (action === 'cancelled' && tx.status === 'paid' && gatewayPhase(tx.transactionStatus) === 'captured') return undefined;
  if (MONEY_MOVED.has(tx.status)) return stateConflict('PAYMENT_SETTLED', tx, action);
  return stateConflict('PAYMENT_CLOSED', tx, action);
}

/** Cancels a pending, challenged or captured (not yet settled) payment at the gateway. */
export function cancelPayment(services: RefreshDeps, id: string, actor: Actor): Promise<TransactionRecord> {
  return closePayment(services, id, actor, 'cancelled');
}

/** Expires a pending payment at the gateway now. */
export function expirePayment(services: RefreshDeps, id: string, actor: Actor): Promise<TransactionRecord> {
  return closePayment(services, id, actor, 'expired');
}

async function closePayment(services: RefreshDeps, id: string, actor: Actor, action: 'cancelled' | 'expired'): Promise<TransactionRecord> {
  const tx = await mustFind(services, id);
  // Asking again for what already happened answers with the payment as it is (a retry is harmless).
  if (tx.status === action) return tx;
  const conflict = closeConflict(tx, action);
  if (conflict) throw conflict;
  audit(services, actor, action === 'cancelled' ? 'cancel' : 'expire', tx);
  const target = await gatewayTarget(services, tx);
  if (target === null) return closeUnusedLink(services, tx, action);
  let res: CoreResponse;
  try {
    res = action === 'cancelled' ? await services.gateway.cancel(target) : await services.gateway.expire(target);
  } catch (err) {
    // A link nobody bought yet has no gateway transaction: the link itself is closed instead.
    if (tx.kind === 'payment_link' && err instanceof GatewayError && err.kind === 'refused' && err.statusCode === '404') return closeUnusedLink(services, tx, action);
    throw err;
  }
  // The gateway's own answer to the action is as good as its status API: it goes through the status machine.
  const report = reportFromStatus(res, { order_id: target, gross_amount: wireAmount(tx.nominal) });
  return (await ingestGatewayReport(services, report, 'status_check', { transaction: tx })).transaction;
}

/** A payment link without a purchase: deactivated at the gateway, then closed here with an ERP event. */
async function closeUnusedLink(services: Deps<'clock' | 'gateway' | 'outbox' | 'store'>, tx: TransactionRecord, status: 'cancelled' | 'expired'): Promise<TransactionRecord> {
  await services.gateway.deletePaymentLink(tx.gatewayOrderId);
  const result = await services.store.transaction(async (db) => {
    await db.notifications.lockTransaction(tx.id);
    const current = await db.transactions.findById(tx.id);
    if (!current || current.status !== 'pending') return { record: current ?? tx };
    const now = services.clock.now();
    const updated = await db.transactions.update(tx.id, { status, statusVersion: current.statusVersion + 1, lastEventAt: now.toISOString() });
    return { record: updated, eventId: await enqueueStatusChanged(db, updated, updated.nominal, now) };
  });
  if (result.eventId) services.outbox.wake();
  return result.record;
}
