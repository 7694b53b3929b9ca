/**
 * The steps every action at the gateway (refund, cancel, expire) shares: finding the payment, the
 * gateway id to act on, the audit line of the ask, the refusal of a state that does not allow it,
 * and reading the outcome back through the status API.
 */
import type { Deps } from '../../types.js';
import type { TransactionRecord } from '../../model/payment.js';
import { isReusableLink } from '../orders/records.js';
import { AppError, type ErrorCode } from '../../platform/errors.js';
import { GatewayError } from '../../gateway/port.js';
import { actorName, audit, type Actor } from '../audit.js';
import { newestPurchaseOrderId, refreshFromGateway, type RefreshDeps } from '../reports/refresh.js';
import { findTransaction } from '../orders/links.js';

/** One audit line per action asked, written before the gateway is called: the ask is on record even if the answer never comes. */
export function auditAsk(
  services: Deps<'logger'>,
  actor: Actor,
  action: 'refund' | 'cancel' | 'expire',
  tx: TransactionRecord,
  extra: Record<string, unknown> = {},
): void {
  const detail = { order_id: tx.orderId, account: tx.account, mercant_id: tx.mercantId, status: tx.status, ...extra };
  audit(
    services,
    { actor, action: `payment_${action}`, subject: tx.orderId, outcome: 'requested' },
    `${actorName(actor)} asked to ${action} ${tx.orderId}`,
    detail,
  );
}

export function stateConflict(code: ErrorCode, tx: TransactionRecord, action: string): AppError {
  return new AppError(code, `${tx.orderId} is ${tx.status}: it cannot be ${action}.`, {
    data: { payment_status: tx.status },
  });
}

/** The payment `actor` acts on; 404 when unknown or of an account the actor may not see. */
export async function mustFind(services: Deps<'store'>, id: string, actor: Actor): Promise<TransactionRecord> {
  const tx = await findTransaction(services, id, actor);
  if (!tx) throw new AppError('NOT_FOUND', `No payment ${JSON.stringify(id)}.`);
  return tx;
}

/** The gateway id to act on: a payment link's newest purchase, else the current gateway transaction, else the order id. */
export async function gatewayTarget(services: Deps<'gateway'>, tx: TransactionRecord): Promise<string | null> {
  // A link used more than once has no one transaction: acting on it acts on the link itself.
  if (tx.kind === 'payment_link' && isReusableLink(tx)) return null;
  if (tx.kind === 'payment_link') {
    const newest = await newestPurchaseOrderId(services, tx);
    if (newest !== undefined) return newest;
    return tx.gatewayTransactionId;
  }
  return tx.gatewayTransactionId ?? tx.gatewayOrderId;
}

/**
 * The payment as the gateway has it after an action (a refund answer names only that refund's
 * amount: the status API's cumulative one is what the ERP gets).
 */
export async function confirm(services: RefreshDeps, tx: TransactionRecord): Promise<TransactionRecord> {
  try {
    return (await refreshFromGateway(services, tx)).transaction;
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    // The gateway accepted the action; its notification (or the next status check) brings the change.
    services.logger.warn(
      { order_id: tx.orderId, error: err.kind },
      'status check after a gateway action failed: waiting for the notification',
    );
    return (await services.store.transactions.findById(tx.id)) ?? tx;
  }
}
