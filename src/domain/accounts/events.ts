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
