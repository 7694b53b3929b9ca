/**
 * The hot statements as SQL text written once, sent through the connection without Kysely's query
 * building: a builder (or a `sql` template) makes an operation tree, freezes it and compiles it to
 * text again on every call, about 7 % of the service's CPU in a bench profile. Written with `?`
 * placeholders; PostgreSQL gets the same text numbered (`$1`, `$2`, …), made once. The text must
 * hold no `?` other than placeholders (no string literal with one).
 *
 * On PostgreSQL each text also has a statement name (`postgresNames`, from a hash of the text, so
 * one name is always one text): the pool's clients (`postgres/open.ts`) send a text found there as
 * a named prepared statement, parsed once per connection and, after five runs, planned once when a
 * generic plan costs no more than the custom ones; an unnamed statement is parsed and planned on
 * every call.
 */
import { createHash } from 'node:crypto';
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

/**
 * PostgreSQL statement texts of every `Precompiled` made, with their statement names. Bounded: one
 * entry per statement, or per shape of a `PrecompiledFamily`.
 */
export const postgresNames = new Map<string, string>();

/** `?` → `$1`, `$2`, … in order. */
function numbered(text: string): string {
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
}

/**
 * `paylink_<verb>_<first table>_<hash of the text>`, at most 63 bytes (PostgreSQL's limit): the hash
 * keeps one name to one text, the rest is what a trace's `pg.query:<name>` span or
 * `pg_prepared_statements` shows a reader.
 */
function statementName(text: string): string {
  const verb = /^\w+/.exec(text)?.[0] ?? 'sql';
  const table = /\b(?:from|into|update)\s+(\w+)/.exec(text)?.[1] ?? '';
  const digest = createHash('sha256').update(text).digest('hex').slice(0, 16);
  return `paylink_${verb}_${table}`.slice(0, 46) + `_${digest}`;
}

export class Precompiled<R> {
  private readonly queries: Record<DatabaseKind, CompiledQuery<R>>;

  constructor(text: string) {
    const compact = text.replace(/\s+/g, ' ').trim();
    // One query node and id per statement: nothing reads them but plugins, and none is installed.
    const base = (t: string) => CompiledQuery.raw(t, []) as CompiledQuery<R>;
    const postgres = numbered(compact);
    if (!postgresNames.has(postgres)) postgresNames.set(postgres, statementName(postgres));
    this.queries = { sqlite: base(compact), postgres: base(postgres) };
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
