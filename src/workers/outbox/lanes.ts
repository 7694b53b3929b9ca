/** The worker's small helpers: lanes over a batch, and waiting for an event's next attempt. */
import type { EventEmitter } from 'node:events';
import type { Store } from '../../storage/contract.js';
import type { AttemptOutcome } from '../../model/delivery.js';

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
