/**
 * Raising and resolving alerts. An alert is a row (at most one open per account, alert and subject,
 * on every instance) and, when the account has an alert receiver (`alerts.url`), a notification on
 * the outbox's alert lane written in the same transaction: durable, retried, signed like ERP
 * events, and never in the way of an ERP event. Firing an alert that is open already does nothing,
 * so every instance may report what it sees.
 */
import { maySee } from '../operators/access.js';
import type { Actor } from '../audit.js';
import { randomUUID } from 'node:crypto';
import type { Deps } from '../../types.js';
import type { AlertKind, AlertRecord, NewAlert } from '../../model/alert.js';
import type { Store } from '../../storage/contract.js';
import { apiTime } from '../../platform/time.js';
import { eventAccount } from '../accounts/events.js';

export type AlertDeps = Deps<'clock' | 'runtimeConfig' | 'store'>;

export const ALERT_FIRING = 'alert.firing';
export const ALERT_RESOLVED = 'alert.resolved';

/** The body an alert receiver gets (format `json`); `account` only on a service with several accounts. */
export function alertBody(a: AlertRecord, account: string | undefined): Record<string, unknown> {
  return {
    type: a.resolvedAt === null ? ALERT_FIRING : ALERT_RESOLVED,
    alert: a.alert,
    subject: a.subject,
    summary: a.summary,
    details: a.details,
    started_at: apiTime(a.startedAt),
    ...(a.resolvedAt === null ? {} : { resolved_at: apiTime(a.resolvedAt) }),
    ...(account === undefined ? {} : { account }),
  };
}

/** Whether `account` has an alert receiver; read before the transaction (SQLite: no read beside an open one). */
async function hasReceiver(deps: AlertDeps, account: string): Promise<boolean> {
  const rc = account === deps.runtimeConfig.account ? deps.runtimeConfig : deps.runtimeConfig.forAccount(account);
  return (await rc.current()).alerts.url !== undefined;
}

async function notify(deps: AlertDeps, tx: Store, a: AlertRecord): Promise<void> {
  const body = alertBody(a, await eventAccount(tx, a.account));
  await tx.outbox.enqueue(
    {
      lane: 'alert',
      eventId: randomUUID(),
      eventType: String(body.type),
      // Firing and resolved of one alert are delivered in that order.
      orderKey: `${a.alert} ${a.subject}`,
      orderId: null,
      mercantId: null,
      statusVersion: null,
      payload: JSON.stringify(body),
    },
    deps.clock.now(),
  );
}

/** Opens `a` for `account` with its notification; false when it is open already (here or on another instance). */
export async function fireAlert(deps: AlertDeps, account: string, a: NewAlert): Promise<boolean> {
  const store = deps.store.forAccount(account);
  const send = await hasReceiver(deps, account);
  return store.transaction(async (tx) => {
    const opened = await tx.alerts.open(a, deps.clock.now());
    if (opened && send) await notify(deps, tx, opened);
    return opened !== undefined;
  });
}

/** Resolves `account`'s open (alert, subject) with its notification; false when none was open. */
export async function resolveAlert(
  deps: AlertDeps,
  account: string,
  alert: AlertKind,
  subject: string,
): Promise<boolean> {
  const store = deps.store.forAccount(account);
  const send = await hasReceiver(deps, account);
  return store.transaction(async (tx) => {
    const resolved = await tx.alerts.resolve(alert, subject, deps.clock.now());
    if (resolved && send) await notify(deps, tx, resolved);
    return resolved !== undefined;
  });
}

/** What is firing now, oldest first; every account's when `account` is absent; with `actor`, only of the accounts it may see. */
export async function firingAlerts(deps: Deps<'store'>, account?: string, actor?: Actor): Promise<AlertRecord[]> {
  const open = await deps.store.alerts.listOpen(account);
  return actor ? open.filter((a) => maySee(actor, a.account)) : open;
}
