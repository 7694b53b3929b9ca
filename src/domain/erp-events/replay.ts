/**
 * Replaying a window of ERP events: every event written in [since, until), optionally of one order
 * or one delivery state, is made due again under its own event id (its `webhook-id`), so an ERP
 * that lost data (a restore from backup, a bug in its receiver) gets the same events again and
 * deduplicates what it has. One audit line names the operator; `dry_run` only counts.
 */
import type { Deps } from '../../types.js';
import type { OutboxState } from '../../model/delivery.js';
import { AppError } from '../../platform/errors.js';
import { actorName, audit, type Actor } from '../audit.js';
import { listedAccounts, requireRole } from '../operators/access.js';

export type ReplayDeps = Deps<'clock' | 'logger' | 'outbox' | 'store'>;

/** The most events one replay re-queues: a wider window is replayed in parts (its answer says how many matched). */
export const REPLAY_MAX = 5_000;

export interface ReplayInput {
  since: string;
  until?: string;
  orderId?: string;
  state?: OutboxState;
  /** Only this account's events (every account's when absent). */
  account?: string;
  dryRun?: boolean;
}

function instant(path: string, v: string): string {
  const t = Date.parse(v);
  // A date-time with its offset: a bare date or local time would mean another instant on each server.
  if (Number.isNaN(t) || !/(Z|[+-]\d{2}:?\d{2})$/i.test(v))
    throw new AppError('VALIDATION_FAILED', `${path} must be an ISO 8601 date-time with an offset.`, {
      errors: [{ path, message: 'an ISO 8601 date-time with Z or an offset, e.g. 2026-11-22T10:00:00+07:00' }],
    });
  return new Date(t).toISOString();
}

export async function replayDeliveries(
  services: ReplayDeps,
  input: ReplayInput,
  actor: Actor,
): Promise<{ count: number; eventIds: string[] }> {
  requireRole(actor, 'finance');
  const since = instant('since', input.since);
  const until = input.until === undefined ? undefined : instant('until', input.until);
  if (until !== undefined && until <= since)
    throw new AppError('VALIDATION_FAILED', 'until must be after since.', {
      errors: [{ path: 'until', message: 'must be after since' }],
    });
  const events = await services.store.outbox.inWindow({
    since,
    until,
    orderId: input.orderId,
    state: input.state,
    account: input.account,
    // An operator limited to some accounts replays only theirs, whatever the filter asks.
    accounts: listedAccounts(actor, input.account),
    limit: REPLAY_MAX,
  });
  const eventIds = events.map((e) => e.eventId);
  if (!input.dryRun) {
    // In the order written: each order's events are re-queued, and so delivered, in their order.
    for (const id of eventIds) await services.store.outbox.retryNow(id, services.clock.now());
    services.outbox.wake();
  }
  audit(
    services,
    {
      actor,
      action: input.dryRun ? 'delivery_replay_dry_run' : 'delivery_replay',
      subject: input.orderId ?? `${since}..${until ?? ''}`,
      outcome: input.dryRun ? 'counted' : 'queued',
    },
    `${actorName(actor)} ${input.dryRun ? 'counted' : 'replayed'} ${eventIds.length} ERP events of a window`,
    {
      since,
      until: until ?? null,
      order_id: input.orderId ?? null,
      status: input.state ?? null,
      account: input.account ?? null,
      count: eventIds.length,
    },
  );
  return { count: eventIds.length, eventIds };
}
