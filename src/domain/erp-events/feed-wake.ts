/**
 * Wakes the pulls waiting on the feed when ERP events are committed: at once for this process's
 * own commits (`committed()`, called after the commit), and through the store's signals for other
 * instances' (PostgreSQL LISTEN/NOTIFY). A waiting pull still polls, as a net for a commit whose
 * word was lost: slowly while the signals are live, at `pollMs` when they are not.
 */
import type { CommitSignals } from '../../storage/contract.js';

/** How a wait ended. */
export type WakeReason = 'woken' | 'polled' | 'aborted';

export interface FeedWake {
  /** Grows with every wake-up: a pull reads it before looking, and waits only if it has not moved since. */
  readonly generation: number;
  /** How many pulls wait now. */
  readonly waiting: number;
  /** After a commit that made ERP events: wakes this process's pulls and tells the other instances. */
  committed(): void;
  /**
   * Resolves when `generation` passes `seen` (`woken`), after the poll interval or `maxMs`, whichever is
   * first (`polled`), or when `signal` aborts (`aborted`).
   */
  wait(seen: number, maxMs: number, signal?: AbortSignal): Promise<WakeReason>;
  /** Stops listening to the other instances. */
  close(): void;
}

export interface FeedWakeOptions {
  /** Poll interval of a waiting pull while the signals are not live, ms (default 200). */
  pollMs?: number;
  /** Poll interval while they are, ms (default 2000): only a lost word waits this long. */
  livePollMs?: number;
}

export function createFeedWake(signals: CommitSignals, o: FeedWakeOptions = {}): FeedWake {
  const pollMs = o.pollMs ?? 200;
  const livePollMs = Math.max(o.livePollMs ?? 2_000, pollMs);
  let generation = 0;
  const waiters = new Set<() => void>();
  const wakeAll = () => {
    generation++;
    for (const w of [...waiters]) w();
  };
  let unlisten: (() => void) | undefined;
  return {
    get generation() {
      return generation;
    },
    get waiting() {
      return waiters.size;
    },
    committed() {
      wakeAll();
      signals.announce('erp_events');
    },
    wait(seen, maxMs, signal) {
      // Listening starts with the first wait: an instance nobody pulls from opens no connection for it.
      unlisten ??= signals.listen('erp_events', wakeAll);
      if (generation !== seen) return Promise.resolve('woken');
      if (signal?.aborted) return Promise.resolve('aborted');
      return new Promise((resolve) => {
        const done = (why: WakeReason) => {
          clearTimeout(timer);
          waiters.delete(onWake);
          signal?.removeEventListener('abort', onAbort);
          resolve(why);
        };
        const onWake = () => done('woken');
        const onAbort = () => done('aborted');
        const timer = setTimeout(
          () => done('polled'),
          Math.max(1, Math.min(maxMs, signals.live ? livePollMs : pollMs)),
        );
        waiters.add(onWake);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    },
    close() {
      unlisten?.();
      unlisten = undefined;
    },
  };
}
