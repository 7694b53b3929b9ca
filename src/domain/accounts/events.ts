/**
 * Whether an ERP event names its account: only when the service has more than one account, so a
 * one-account service sends exactly the bytes it sent before accounts existed. An account's events
 * other than `default`'s always name it (there are then two accounts at least).
 */
import { DEFAULT_ACCOUNT } from '../../model/account.js';
import type { Store } from '../../storage/contract.js';

/** The account to put in an event body of `account`, or undefined on a one-account service. */
export async function eventAccount(store: Store, account: string): Promise<string | undefined> {
  if (account !== DEFAULT_ACCOUNT) return account;
  return (await store.accounts.count()) > 1 ? account : undefined;
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
