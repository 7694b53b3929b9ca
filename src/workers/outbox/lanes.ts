/**
 * The worker's small helpers: how many lanes an account may take, lanes over a batch, and waiting
 * for an event's next attempt.
 */
import type { EventEmitter } from 'node:events';
import type { Store } from '../../storage/contract.js';
import type { AttemptOutcome } from '../../model/delivery.js';

/**
 * Lanes `account` may take now, of `total` shared by `accounts` (those with an ERP endpoint), with
 * `inUse` lanes held per account. Pass 1 gives each account up to its fair share (total / accounts);
 * pass 2 hands what is left to accounts that had more due. An account holding no lane may always
 * take one that is free; beyond it, one lane stays free for each other account holding none, so an
 * account whose ERP is slow can hold many lanes for seconds yet never the last one another needs.
 */
export function freeLanes(
  account: string,
  inUse: ReadonlyMap<string, number>,
  accounts: readonly string[],
  total: number,
  pass: 1 | 2,
): number {
  let used = 0;
  for (const n of inUse.values()) used += n;
  const free = total - used;
  if (free <= 0) return 0;
  const mine = inUse.get(account) ?? 0;
  const idleOthers = accounts.filter((a) => a !== account && (inUse.get(a) ?? 0) === 0).length;
  const first = mine === 0 ? 1 : 0;
  const lanes = first + Math.max(0, free - first - idleOthers);
  if (pass === 2) return lanes;
  const fair = Math.max(1, Math.floor(total / Math.max(1, accounts.length)));
  return Math.max(0, Math.min(lanes, Math.max(first, fair - mine)));
}

/** Runs `fn` over `items` with at most `limit` at a time, each lane taking the next item when it is free. */
export async function forEachLimited<T>(items: T[], limit: number, fn: (t: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const item = items[next++];
      if (item !== undefined) await fn(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

/** In-process attempts resolve at once; attempts by another instance are seen by polling the table. */
export function waitForAttempt(
  store: Store,
  events: EventEmitter,
  seq: number,
  afterAttempts: number,
  timeoutMs: number,
): Promise<AttemptOutcome | undefined> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (v: AttemptOutcome | undefined) => {
      if (done) return;
      done = true;
      clearTimeout(deadline);
      clearInterval(poll);
      events.off(`attempt:${seq}`, finish);
      resolve(v);
    };
    events.on(`attempt:${seq}`, finish);
    const deadline = setTimeout(() => finish(undefined), timeoutMs);
    const poll = setInterval(() => {
      store.outbox.attemptsFor([seq]).then(
        (list) => {
          const next = list[afterAttempts];
          if (next) finish(next.outcome);
        },
        () => undefined,
      );
    }, 250);
  });
}
