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
    return db.executeQuery<R>({ ...this.queries[kind], parameters });
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
