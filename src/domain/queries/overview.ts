/** What the console's overview shows: payments by status, the ERP outbox, and the health of what the service depends on. */
import type { Deps } from '../../types.js';
import type { NotificationRecord } from '../../model/notification.js';
import type { OutboxState } from '../../model/delivery.js';
import { visibleAccounts } from '../operators/access.js';
import type { Actor } from '../audit.js';
import { databaseHealth, gatewayHealth, type DatabaseHealth, type GatewayHealth } from './health.js';

export interface Overview {
  /** Payments created since each start, by status (statuses without any are absent). */
  counts: { today: Record<string, number>; week: Record<string, number> };
  outbox: Record<OutboxState, number>;
  /** When the oldest event not yet delivered was written (ISO), if any. */
  oldestUndelivered: string | undefined;
  lastNotification: NotificationRecord | undefined;
  database: DatabaseHealth;
  gateway: GatewayHealth;
}

/**
 * `since` gives the starts of "today" and "the last 7 days" (the caller knows the time zone they are
 * counted in). Payments, events and the last notification are of the accounts `actor` may see: an
 * operator limited to some accounts learns nothing of another's volume or orders.
 */
export async function overview(
  services: Deps<'gateway' | 'store'>,
  since: { today: Date; week: Date },
  actor: Actor,
): Promise<Overview> {
  const q = services.store.console;
  const accounts = visibleAccounts(actor);
  const [today, week, outbox, oldestUndelivered, lastNotification, database, gateway] = await Promise.all([
    q.countsByStatus(since.today.toISOString(), accounts),
    q.countsByStatus(since.week.toISOString(), accounts),
    services.store.outbox.countByState(accounts),
    q.oldestUndelivered(accounts),
    q.lastNotification(accounts),
    databaseHealth(services),
    gatewayHealth(services),
  ]);
  return { counts: { today, week }, outbox, oldestUndelivered, lastNotification, database, gateway };
}
