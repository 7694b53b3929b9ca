/**
 * Group commit for SQLite: the transactions that arrive while one commit is on its way to disk run
 * together in the next database transaction, each after the first inside a savepoint of its own, and share its one
 * commit (one fsync with synchronous=FULL). Nothing is weakened: each caller's promise settles only
 * after the commit that holds its writes returned, so an answer sent after `transaction()` resolved
 * always describes durable data. A caller that throws is undone alone (rolled back to its savepoint,
 * or, the first, with the transaction, the others then run in a new one); a failed commit rejects
 * every caller of the group.
 *
 * Callers run one after another (one SQLite connection), so each sees the writes of those before
 * it, exactly as with separate transactions in that order.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';
import type { Access } from '../contract.js';
import { Precompiled, directRunners, type DirectRunner } from './precompiled.js';

const SAVEPOINT = new Precompiled('savepoint member');
const RELEASE = new Precompiled('release member');
const ROLLBACK_TO = new Precompiled('rollback to member');

interface Member {
  fn: (trx: Transaction<Database>) => Promise<unknown>;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

/** The first member of a transaction threw: the transaction is rolled back, the member rejected with `error`. */
class FirstMemberFailed {
  constructor(readonly error: unknown) {}
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** Enough to share one fsync among every request of a busy moment, small enough to keep a group's latency low. */
const MAX_GROUP = 128;

export class GroupCommit {
  private queue: Member[] = [];
  private running = false;

  constructor(
    private readonly db: Kysely<Database>,
    /** Runs a statement on the connection the group's transaction holds. */
    private readonly held?: DirectRunner,
  ) {}

  run<T>(fn: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve: (v) => resolve(v as T), reject });
      if (this.running) return;
      this.running = true;
      // Let the requests that arrived in the same turn of the event loop join this group.
      setImmediate(() => void this.flush());
    });
  }

  private async flush(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const group = this.queue.splice(0, MAX_GROUP);
        await this.commitGroup(group);
      }
    } finally {
      this.running = false;
      if (this.queue.length > 0) {
        this.running = true;
        setImmediate(() => void this.flush());
      }
    }
  }

  /**
   * The group's members in as few transactions as their failures allow. A transaction's first member
   * runs without a savepoint: nothing before it is there to keep, so when it throws the whole
   * transaction is rolled back and the rest start again in a new one. That saves two statements
   * (the savepoint and its release) of every transaction, two of the ten a lone new notification
   * sends. Every later member runs in a savepoint of its own and is undone alone.
   */
  private async commitGroup(group: Member[]): Promise<void> {
    let from = 0;
    while (from < group.length) {
      const outcomes: Outcome[] = [];
      try {
        await this.db.transaction().execute(async (trx) => {
          // The precompiled statements of the transaction go straight to the connection it holds.
          if (this.held) directRunners.set(trx, this.held);
          try {
            const first = group[from] as Member;
            try {
              outcomes.push({ ok: true, value: await first.fn(trx) });
            } catch (error) {
              throw new FirstMemberFailed(error);
            }
            for (const m of group.slice(from + 1)) outcomes.push(await this.runMember(trx, m));
          } finally {
            directRunners.delete(trx);
          }
        });
      } catch (err) {
        if (err instanceof FirstMemberFailed) {
          // Rolled back with nothing else in it: that member alone fails, the rest go on.
          (group[from] as Member).reject(err.error);
          from += 1;
          continue;
        }
        // The commit (or a rollback) failed: nothing of the members left is kept.
        for (const m of group.slice(from)) m.reject(err);
        return;
      }
      group.slice(from).forEach((m, i) => {
        const o = outcomes[i];
        if (o?.ok) m.resolve(o.value);
        else m.reject(o ? o.error : new Error('group commit: no outcome'));
      });
      return;
    }
  }

  private async runMember(trx: Transaction<Database>, m: Member): Promise<Outcome> {
    await SAVEPOINT.run(trx, 'sqlite', []);
    try {
      const value = await m.fn(trx);
      await RELEASE.run(trx, 'sqlite', []);
      return { ok: true, value };
    } catch (error) {
      await ROLLBACK_TO.run(trx, 'sqlite', []);
      await RELEASE.run(trx, 'sqlite', []);
      return { ok: false, error };
    }
  }
}

/**
 * `repo`, with each method `access` declares a `write` run through `run` (a transaction of the group
 * commit, on that transaction's own repo): how a write called on the Store outside a transaction
 * joins a group (the rule `Store` and `STORE_ACCESS` state in the contract). A repo with no `write`
 * method is returned as it is.
 */
export function groupedWrites<R extends object>(
  repo: R,
  access: Access<R>,
  run: <T>(fn: (r: R) => Promise<T>) => Promise<T>,
): R {
  const kinds: Record<string, string> = access;
  if (!Object.values(kinds).includes('write')) return repo;
  const isWrite = (prop: string | symbol): prop is keyof R & string =>
    typeof prop === 'string' && kinds[prop] === 'write';
  return new Proxy(repo, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function' || !isWrite(prop)) return value;
      return (...args: unknown[]) =>
        run((r) => {
          const method: unknown = Reflect.get(r, prop);
          if (typeof method !== 'function') throw new Error(`no method ${prop}`);
          return Promise.resolve(method.apply(r, args));
        });
    },
  });
}
