/**
 * Refreshing a payment from the gateway: paylink asks the status API about a transaction (the
 * status endpoint, the sweeper, after an action) and ingests the answer when it is about it.
 */
import type { Deps } from '../../types.js';
import type { TransactionRecord } from '../../model/payment.js';
import { ingestGatewayReport, type IngestDeps } from './ingest.js';
import { answerFor, localExpiry } from './trust.js';
import { isReusableLink } from '../orders/records.js';

/** Asking the gateway, then recording what it says. */
export type RefreshDeps = IngestDeps & Deps<'gateway'>;

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
 * newest purchase. The answer is applied only when it is about this transaction (trust.ts);
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
  // A link used more than once is not one payment: its purchases are refreshed on their own rows.
  if (tx.kind === 'payment_link' && !isReusableLink(tx)) {
    const newest = await newestPurchaseOrderId(services, tx);
    if (newest !== undefined) lookup = newest;
  }
  let st =
    lookup === null
      ? undefined
      : await services.gateway.status(lookup, { carrier: tx.carrier, paymentType: tx.paymentType });
  let bound = st ? answerFor(st, tx) : undefined;
  const flags: string[] = [];
  if (bound && !bound.ok && lookup === tx.gatewayTransactionId && tx.kind !== 'payment_link') {
    services.logger.warn(
      { order_id: tx.orderId, reason: bound.reason, flag: 'status_answer_mismatch' },
      'status by the stored transaction id answered about another order: asking by the order id',
    );
    flags.push('status_answer_mismatch');
    st = await services.gateway.status(tx.gatewayOrderId, { carrier: tx.carrier, paymentType: tx.paymentType });
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
