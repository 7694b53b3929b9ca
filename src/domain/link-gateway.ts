/** Creating a Payment Link at the gateway exactly once, even across timeouts and retries. */
import type { Services } from '../services.js';
import type { TransactionRecord } from '../storage/store.js';
import { GatewayError } from '../gateway/errors.js';
import type { PaymentLinkDetails } from '../gateway/wire.js';
import { AppError } from '../errors.js';
import type { Expiry } from './expiry.js';
import type { Customer, Item } from './order-input.js';
import { recordCreated, recordRefused, storedRequest } from './order-records.js';

export interface LinkBodyInput {
  gatewayOrderId: string;
  paymentLinkId: string;
  nominal: number;
  items: Item[];
  customer?: Customer;
  expiry: Expiry;
  enabledPayments: string[];
}

/** The Payment Link create body (reference §1.2). One use only: a link pays one order. */
export function paymentLinkBody(i: LinkBodyInput): Record<string, unknown> {
  const body: Record<string, unknown> = {
    transaction_details: { order_id: i.gatewayOrderId, gross_amount: i.nominal, payment_link_id: i.paymentLinkId },
    usage_limit: 1,
    expiry: { start_time: i.expiry.startTime, duration: i.expiry.durationMinutes, unit: 'minutes' },
    item_details: i.items.map((it) => ({ ...(it.id !== undefined ? { id: it.id } : {}), name: it.name, price: it.price, quantity: it.quantity })),
  };
  if (i.customer) body.customer_details = { ...i.customer };
  if (i.enabledPayments.length > 0) body.enabled_payments = [...i.enabledPayments];
  return body;
}

function isTaken(err: unknown): boolean {
  return err instanceof GatewayError && err.kind === 'refused' && err.info.httpStatus === 409;
}

/** A link found at the gateway is ours only when it carries the payment_link_id we generated. */
async function adopt(services: Services, tx: TransactionRecord, found: PaymentLinkDetails): Promise<TransactionRecord> {
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
export async function pushPaymentLink(services: Services, tx: TransactionRecord, askFirst: boolean): Promise<TransactionRecord> {
  const { gateway } = storedRequest(tx);
  if (askFirst) {
    const found = await services.gateway.getPaymentLink(tx.gatewayOrderId);
    if (found) return adopt(services, tx, found);
  }
  try {
    const created = await services.gateway.createPaymentLink(gateway, { idempotencyKey: tx.paymentLinkId ?? undefined });
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
