/**
 * Acting on ERP deliveries: make one event, or every undelivered event of an order, due now. The
 * event keeps its id and body (the ERP deduplicates on the id); a dead or delivered event gets a
 * new retry window. The outbox worker is woken, so the attempt follows at once.
 */
import type { Deps } from '../../types.js';
import type { DeliveryAttempt, OutboxEvent } from '../../model/delivery.js';
import { AppError } from '../../platform/errors.js';
import { orderKeyOf } from '../accounts/events.js';
import { actorName, audit, type Actor } from '../audit.js';
import { maySee, requireRole } from '../operators/access.js';
import { resolveAlert } from '../alerts/alerts.js';

/** With `runtimeConfig`, a retry by hand also resolves the event's `erp_delivery_dead` alert. */
export type DeliveryDeps = Deps<'clock' | 'logger' | 'outbox' | 'store'> & Partial<Deps<'runtimeConfig'>>;

/** Failing (retried by itself with backoff) or dead (retries ran out): an operator may retry it. */
export function isUndelivered(e: Pick<OutboxEvent, 'state'>): boolean {
  return e.state === 'failed' || e.state === 'dead';
}

/** One event as it is; unknown id, or an event of an account `actor` may not see → 404. */
export async function findDelivery(services: Deps<'store'>, eventId: string, actor: Actor): Promise<OutboxEvent> {
  const event = await services.store.outbox.findByEventId(eventId);
  if (!event || !maySee(actor, event.account)) throw new AppError('NOT_FOUND', 'No delivery with this id.');
  return event;
}

/** One event due now; unknown id → 404. Answers the event as it now is, with its attempts. */
export async function retryDelivery(
  services: DeliveryDeps,
  eventId: string,
  actor: Actor,
): Promise<{ event: OutboxEvent; attempts: DeliveryAttempt[] }> {
  requireRole(actor, 'finance');
  await findDelivery(services, eventId, actor);
  const event = await services.store.outbox.retryNow(eventId, services.clock.now());
  if (!event) throw new AppError('NOT_FOUND', 'No delivery with this id.');
  if (services.runtimeConfig)
    await resolveAlert(
      { ...services, runtimeConfig: services.runtimeConfig },
      event.account,
      'erp_delivery_dead',
      event.eventId,
    );
  audit(
    services,
    { actor, action: 'delivery_retry', subject: event.orderId ?? event.orderKey, outcome: 'queued' },
    `${actorName(actor)} re-queued an ERP delivery`,
    { order_id: event.orderId, account: event.account, events: [event.eventId] },
  );
  services.outbox.wake();
  return { event, attempts: await services.store.outbox.attemptsFor([event.seq]) };
}

/**
 * Every failing or dead event of one order of the store's account due now, in their order; answers
 * their ids (none is no error); an account `actor` may not see has no such order (404).
 */
export async function retryOrderDeliveries(services: DeliveryDeps, orderId: string, actor: Actor): Promise<string[]> {
  requireRole(actor, 'finance');
  if (!maySee(actor, services.store.account)) throw new AppError('NOT_FOUND', `No payment ${JSON.stringify(orderId)}.`);
  const orderKey = orderKeyOf(services.store.account, orderId);
  const events = (await services.store.console.eventsForOrder(orderKey)).filter(isUndelivered);
  for (const e of events) await services.store.outbox.retryNow(e.eventId, services.clock.now());
  const ids = events.map((e) => e.eventId);
  audit(
    services,
    { actor, action: 'delivery_retry', subject: orderId, outcome: 'queued' },
    `${actorName(actor)} re-queued the undelivered ERP events of an order`,
    { order_id: orderId, account: services.store.account, events: ids },
  );
  services.outbox.wake();
  return ids;
}
