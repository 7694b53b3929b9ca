/** Everything recorded about one payment, for its timeline: notifications, ERP events with their attempts, refunds. */
import type { Deps } from '../../types.js';
import { orderKeyOf } from '../accounts/events.js';
import type { TransactionRecord } from '../../model/payment.js';
import type { NotificationRecord } from '../../model/notification.js';
import type { DeliveryAttempt, OutboxEvent } from '../../model/delivery.js';
import type { RefundRecord } from '../../model/refund.js';

export interface PaymentHistory {
  notifications: NotificationRecord[];
  /** The order's ERP events, in delivery order. */
  events: OutboxEvent[];
  /** The delivery attempts of those events. */
  attempts: DeliveryAttempt[];
  refunds: RefundRecord[];
}

export async function paymentHistory(services: Deps<'store'>, tx: TransactionRecord): Promise<PaymentHistory> {
  const [notifications, events, refunds] = await Promise.all([
    services.store.console.notificationsFor(tx.id, tx.gatewayOrderId),
    services.store.console.eventsForOrder(orderKeyOf(tx.account, tx.orderId)),
    services.store.refunds.listFor(tx.id),
  ]);
  const attempts = await services.store.outbox.attemptsFor(events.map((e) => e.seq));
  return { notifications, events, attempts, refunds };
}
