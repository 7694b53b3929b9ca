/**
 * The lists operators page through: transactions and ERP deliveries, newest first, with cursors the
 * previous page handed out (a cursor this service did not hand out is a 400, never an empty page);
 * and the console's numbered pages: the transaction search and the undelivered events.
 */
import type { Deps } from '../../types.js';
import type { PaymentStatus, TransactionRecord } from '../../model/payment.js';
import type { DeliveryAttempt, OutboxEvent, OutboxState } from '../../model/delivery.js';
import type { Page } from '../../model/page.js';
import { AppError } from '../../platform/errors.js';
import type { ConsoleSearch, Store } from '../../storage/contract.js';
import type { Actor } from '../audit.js';
import { listedAccounts } from '../operators/access.js';

export type { ConsoleSearch };

function checkCursor(store: Store, cursor: string | undefined): void {
  if (cursor !== undefined && !store.isListCursor(cursor))
    throw new AppError('VALIDATION_FAILED', 'The cursor is not one this list handed out.', {
      errors: [{ path: 'cursor', message: 'is not a cursor this list returned' }],
    });
}

export interface TransactionListQuery {
  /** Only this account's; every account's when absent. */
  account?: string;
  status?: PaymentStatus;
  mercantId?: string;
  /** ISO time; only transactions created at or after it. */
  since?: string;
  /** 1..1000, default 100. */
  limit?: number;
  cursor?: string;
}

/** Of the accounts `actor` may see (an account beyond them lists nothing, as an unknown one). */
export async function listTransactions(
  services: Deps<'store'>,
  q: TransactionListQuery,
  actor: Actor,
): Promise<Page<TransactionRecord>> {
  checkCursor(services.store, q.cursor);
  return services.store.transactions.list({ ...q, accounts: listedAccounts(actor, q.account) });
}

/** Every transaction the query selects, newest first, a page at a time (an export streams them). */
export async function* eachTransaction(
  services: Deps<'store'>,
  q: Omit<TransactionListQuery, 'cursor' | 'limit'>,
  actor?: Actor,
): AsyncGenerator<TransactionRecord> {
  let cursor: string | undefined;
  const accounts = actor ? listedAccounts(actor, q.account) : undefined;
  do {
    const page = await services.store.transactions.list({ ...q, accounts, cursor, limit: 1000 });
    yield* page.items;
    cursor = page.nextCursor;
  } while (cursor !== undefined);
}

export interface DeliveryListQuery {
  /** Only this account's events; every account's when absent. */
  account?: string;
  state?: OutboxState;
  /** 1..500, default 50. */
  limit?: number;
  cursor?: string;
}

/** ERP events newest first, each page with the delivery attempts of its events. */
export async function listDeliveries(
  services: Deps<'store'>,
  q: DeliveryListQuery,
  actor: Actor,
): Promise<{ page: Page<OutboxEvent>; attempts: DeliveryAttempt[] }> {
  checkCursor(services.store, q.cursor);
  const page = await services.store.outbox.list({ ...q, accounts: listedAccounts(actor, q.account) });
  return { page, attempts: await services.store.outbox.attemptsFor(page.items.map((e) => e.seq)) };
}

/** The console's search, one numbered page (`more`: a next page exists), with the payment types there are to filter by. */
export async function searchTransactions(
  services: Deps<'store'>,
  s: ConsoleSearch & { account?: string },
  actor: Actor,
): Promise<{ items: TransactionRecord[]; more: boolean; paymentTypes: string[] }> {
  const [found, paymentTypes] = await Promise.all([
    services.store.console.searchTransactions({ ...s, accounts: listedAccounts(actor, s.account) }),
    services.store.console.paymentTypes(),
  ]);
  return { ...found, paymentTypes };
}

/** Failing and/or dead events across orders, oldest first, one numbered page of `pageSize`. */
export async function undeliveredEvents(
  services: Deps<'store'>,
  state: 'failed' | 'dead' | 'both',
  page: number,
  pageSize: number,
  scope: { actor: Actor; account?: string },
): Promise<{ items: OutboxEvent[]; more: boolean }> {
  const accounts = listedAccounts(scope.actor, scope.account);
  const rows = await services.store.console.undeliverable(state, pageSize + 1, (page - 1) * pageSize, accounts);
  return { items: rows.slice(0, pageSize), more: rows.length > pageSize };
}

/**
 * Every transaction the console's search selects, newest first, a page at a time (the console's
 * download of its list, with the page's own filters). Pages by offset: a payment created while the
 * file is being written may shift a row into the next page and be written twice, never left out.
 */
export async function* eachSearchedTransaction(
  services: Deps<'store'>,
  s: Omit<ConsoleSearch, 'page' | 'pageSize'> & { account?: string },
  actor: Actor,
): AsyncGenerator<TransactionRecord> {
  const pageSize = 500;
  const accounts = listedAccounts(actor, s.account);
  for (let page = 1; ; page++) {
    const found = await services.store.console.searchTransactions({ ...s, accounts, page, pageSize });
    yield* found.items;
    if (!found.more) return;
  }
}
