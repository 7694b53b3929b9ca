/**
 * Whether an ERP event names its account: only when the service has more than one account, so a
 * one-account service sends exactly the bytes it sent before accounts existed. An account's events
 * other than `default`'s always name it (there are then two accounts at least).
 */
import { DEFAULT_ACCOUNT } from '../../model/account.js';
import type { CommitSignals, Store } from '../../storage/contract.js';

interface CountCache {
  value?: number;
  /** Grows with every invalidation: a read that started before one does not keep its answer. */
  generation: number;
}

/** Per database (its signals object is shared by every view and transaction of one store). */
const counts = new WeakMap<CommitSignals, CountCache>();

function cacheOf(signals: CommitSignals): CountCache {
  let c = counts.get(signals);
  if (!c) {
    const made: CountCache = { generation: 0 };
    counts.set(signals, made);
    // Another instance's new account, and a listener that resumes after missing some, both forget it.
    signals.listen('accounts', () => forget(made));
    c = made;
  }
  return c;
}

function forget(c: CountCache): void {
  c.value = undefined;
  c.generation++;
}

/**
 * How many accounts exist (disabled ones included), read once and kept: every notification needs
 * it, and it changes only when an account is created (accounts are never deleted). A kept count is
 * used only while the other instances' word reaches this one (`signals.live`), except a count above
 * one, which can never fall back to one. Another instance's new account is seen within the
 * notification's delivery (milliseconds), the same order of window as reading the count before the
 * ingest transaction already leaves.
 */
export async function accountCount(store: Store): Promise<number> {
  const c = cacheOf(store.signals);
  if (c.value !== undefined && (c.value > 1 || store.signals.live)) return c.value;
  const generation = c.generation;
  const value = await store.accounts.count();
  if (c.generation === generation) c.value = value;
  return value;
}

/** After an account is committed: this process forgets its count, and tells the other instances to. */
export function accountsChanged(store: Store): void {
  forget(cacheOf(store.signals));
  store.signals.announce('accounts');
}

/** The account to put in an event body of `account`, or undefined on a one-account service. */
export async function eventAccount(store: Store, account: string): Promise<string | undefined> {
  if (account !== DEFAULT_ACCOUNT) return account;
  return (await accountCount(store)) > 1 ? account : undefined;
}

/**
 * The outbox's ordering key of an order's events: delivered strictly one after another per key, so
 * the same order id in two accounts must be two keys (one account's ERP being down never holds
 * the other's events back). `default`'s keys are the order ids, as before accounts; order ids
 * cannot hold control characters, so the unit separator cannot make two keys meet.
 */
export function orderKeyOf(account: string, orderId: string): string {
  return account === DEFAULT_ACCOUNT ? orderId : `${account}\u001f${orderId}`;
}
