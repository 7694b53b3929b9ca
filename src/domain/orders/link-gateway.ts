/** Creating a Payment Link at the gateway exactly once, even across timeouts and retries. */
import type { Deps } from '../../types.js';
import type { TransactionRecord } from '../../model/payment.js';
import { GatewayError } from '../../gateway/midtrans/errors.js';
import type { PaymentLinkDetails } from '../../gateway/midtrans/wire.js';
import { storedPaymentLinkRequest } from '../../gateway/midtrans/requests.js';
import { AppError } from '../../platform/errors.js';
import { recordCreated, recordRefused, storedRequest } from './records.js';

function isTaken(err: unknown): boolean {
  return err instanceof GatewayError && err.kind === 'refused' && err.info.httpStatus === 409;
}

/** A link found at the gateway is ours only when it carries the payment_link_id we generated. */
async function adopt(services: Deps<'logger' | 'store'>, tx: TransactionRecord, found: PaymentLinkDetails): Promise<TransactionRecord> {
  if (found.payment_link_id !== tx.paymentLinkId || !found.payment_link_url) {
    throw new AppError('ORDER_CONFLICT', `The gateway already holds a different payment link for order id ${tx.gatewayOrderId}.`, {
      data: { order_id: tx.orderId, gateway_order_id: tx.gatewayOrderId, mercant_id: tx.mercantId, current_status: tx.status },
    });
  }
  services.logger.info({ order_id: tx.orderId, gateway_order_id: tx.gatewayOrderId }, 'payment link adopted from the gateway after an unconfirmed creation');
  return recordCreated(services.store, tx, { paymentUrl: found.payment_link_url, gatewayJson: JSON.stringify({ order_id: found.order_id, payment_url: found.payment_link_url }) });
}

/**
 * Makes sure the link of an (unconfirmed) record exists at the gateway. `askFirst` is set on a
 * retry: an earlier call may have created the link and timed out, so its result is adopted instead
 * of creating a second, different one.
 */
export async function pushPaymentLink(services: Deps<'gateway' | 'logger' | 'store'>, tx: TransactionRecord, askFirst: boolean): Promise<TransactionRecord> {
  const { gateway } = storedRequest(tx);
  if (askFirst) {
    const found = await services.gateway.getPaymentLink(tx.gatewayOrderId);
    if (found) return adopt(services, tx, found);
  }
  try {
    const created = await services.gateway.createPaymentLink(storedPaymentLinkRequest(gateway), { idempotencyKey: tx.paymentLinkId ?? undefined });
    return await recordCreated(services.store, tx, { paymentUrl: created.payment_url, gatewayJson: JSON.stringify(created) });
  } catch (err) {
    if (isTaken(err)) {
      const found = await services.gateway.getPaymentLink(tx.gatewayOrderId);
      if (found) return adopt(services, tx, found);
    }
    // A refusal means nothing was created: the record says so, and a retry may try again.
    if (err instanceof GatewayError && err.kind === 'refused') await recordRefused(services.store, tx);
    throw err;
  }
}
