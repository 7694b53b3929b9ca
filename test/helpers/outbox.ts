import { randomUUID } from 'node:crypto';
import type { NewOutboxEvent } from '../../src/model/delivery.js';

/** A new ERP event of `orderKey` (a fresh id; the payload names the order), with `over` on top. */
export function outboxEvent(orderKey: string, over: Partial<NewOutboxEvent> = {}): NewOutboxEvent {
  return {
    eventId: randomUUID(),
    eventType: 'payment.status_changed',
    orderKey,
    orderId: orderKey,
    mercantId: 'M',
    statusVersion: 1,
    payload: `{"order":"${orderKey}"}`,
    ...over,
  };
}
