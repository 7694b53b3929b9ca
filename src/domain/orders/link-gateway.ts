/** Creating a Payment Link at the gateway exactly once, even across timeouts and retries. */
import type { Deps } from '../../types.js';
import type { TransactionRecord } from '../../model/payment.js';
import type { LinkAtGateway } from '../../gateway/port.js';
import { AppError } from '../../platform/errors.js';
import { recordCreated, refusedCreation, storedRequest } from './records.js';

/** A link found at the gateway is ours only when it carries the payment_link_id we generated. */
async function adopt(
  services: Deps<'logger' | 'store'>,
  tx: TransactionRecord,
  found: LinkAtGateway,
): Promise<TransactionRecord> {
  if (found.paymentLinkId !== tx.paymentLinkId || !found.url) {
    throw new AppError(
      'ORDER_CONFLICT',
      `The gateway already holds a different payment link for order id ${tx.gatewayOrderId}.`,
      {
        data: {
          order_id: tx.orderId,
          gateway_order_id: tx.gatewayOrderId,
          mercant_id: tx.mercantId,
          current_status: tx.status,
        },
      },
    );
  }
  services.logger.info(
    { order_id: tx.orderId, gateway_order_id: tx.gatewayOrderId },
    'payment link adopted from the gateway after an unconfirmed creation',
  );
  return recordCreated(services.store, tx, {
    paymentUrl: found.url,
    gatewayJson: JSON.stringify({ order_id: found.orderId, payment_url: found.url }),
  });
}

/**
 * Makes sure the link of an (unconfirmed) record exists at the gateway. `askFirst` is set on a
 * retry: an earlier call may have created the link and timed out, so its result is adopted instead
 * of creating a second, different one.
 */
export async function pushPaymentLink(
  services: Deps<'gateway' | 'logger' | 'store'>,
  tx: TransactionRecord,
  askFirst: boolean,
): Promise<TransactionRecord> {
  const { gateway } = storedRequest(tx);
  if (askFirst) {
    const found = await services.gateway.findPaymentLink(tx.gatewayOrderId);
    if (found) return adopt(services, tx, found);
  }
  const created = await services.gateway.createPaymentLink(gateway, tx.paymentLinkId ?? undefined);
  if (created.kind === 'created')
    return recordCreated(services.store, tx, { paymentUrl: created.paymentUrl, gatewayJson: created.answerJson });
  if (created.kind === 'exists') {
    const found = await services.gateway.findPaymentLink(tx.gatewayOrderId);
    if (found) return adopt(services, tx, found);
  }
  // A refusal means nothing was created: the record says so, and a retry may try again.
  return refusedCreation(services.store, tx, created.refusal);
}
