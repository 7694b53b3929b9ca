/** What the console's overview shows: payments by status, the ERP outbox, and the health of what the service depends on. */
import type { Deps } from '../../types.js';
import type { NotificationRecord } from '../../model/notification.js';
import type { OutboxState } from '../../model/delivery.js';
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

/** `since` gives the starts of "today" and "the last 7 days" (the caller knows the time zone they are counted in). */
export async function overview(
  services: Deps<'gateway' | 'store'>,
  since: { today: Date; week: Date },
): Promise<Overview> {
  const q = services.store.console;
  const [today, week, outbox, oldestUndelivered, lastNotification, database, gateway] = await Promise.all([
    q.countsByStatus(since.today.toISOString()),
    q.countsByStatus(since.week.toISOString()),
    services.store.outbox.countByState(),
    q.oldestUndelivered(),
    q.lastNotification(),
    databaseHealth(services),
    gatewayHealth(services),
  ]);
  return { counts: { today, week }, outbox, oldestUndelivered, lastNotification, database, gateway };
}
