/**
 * The hot statements as SQL text written once, sent through the connection without Kysely's query
 * building: a builder (or a `sql` template) makes an operation tree, freezes it and compiles it to
 * text again on every call, about 7 % of the service's CPU in a bench profile. Written with `?`
 * placeholders; PostgreSQL gets the same text numbered (`$1`, `$2`, …), made once. The text must
 * hold no `?` other than placeholders (no string literal with one).
 */
import { CompiledQuery, type Kysely, type QueryResult } from 'kysely';
import type { Database } from './schema.js';

export type DatabaseKind = 'sqlite' | 'postgres';

/**
 * Runs a statement on the connection at once, past Kysely's executor (its connection provider,
 * result transform and their promises), or answers undefined when it cannot now (the connection is
 * another caller's): then the statement goes through Kysely. Only SQLite's connection, which runs
 * a statement synchronously, has one (`sqlite/driver.ts`).
 */
export type DirectRunner = (query: CompiledQuery) => Promise<QueryResult<unknown>> | undefined;

/** The direct runner of a connection (a store's `Kysely`) or of a transaction open on it, while it is open. */
export const directRunners = new WeakMap<Kysely<Database>, DirectRunner>();

/** `?` → `$1`, `$2`, … in order. */
function numbered(text: string): string {
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
}

export class Precompiled<R> {
  private readonly queries: Record<DatabaseKind, CompiledQuery<R>>;

  constructor(text: string) {
    const compact = text.replace(/\s+/g, ' ').trim();
    // One query node and id per statement: nothing reads them but plugins, and none is installed.
    const base = (t: string) => CompiledQuery.raw(t, []) as CompiledQuery<R>;
    this.queries = { sqlite: base(compact), postgres: base(numbered(compact)) };
  }

  run(db: Kysely<Database>, kind: DatabaseKind, parameters: readonly unknown[]): Promise<QueryResult<R>> {
    const query = { ...this.queries[kind], parameters };
    const direct = kind === 'sqlite' ? directRunners.get(db)?.(query) : undefined;
    return (direct as Promise<QueryResult<R>> | undefined) ?? db.executeQuery<R>(query);
  }

  async first(db: Kysely<Database>, kind: DatabaseKind, parameters: readonly unknown[]): Promise<R | undefined> {
    return (await this.run(db, kind, parameters)).rows[0];
  }
}

/** Statements whose text depends on a few choices (the columns a patch sets, say): each made once per key. */
export class PrecompiledFamily<R> {
  private readonly made = new Map<string, Precompiled<R>>();

  constructor(private readonly textFor: (key: string) => string) {}

  get(key: string): Precompiled<R> {
    let p = this.made.get(key);
    if (!p) {
      p = new Precompiled<R>(this.textFor(key));
      this.made.set(key, p);
    }
    return p;
  }
}
