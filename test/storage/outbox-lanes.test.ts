/**
 * The per-order lane table (migration 042): after any mix of the outbox's writes it names, for each
 * order with an undelivered event, exactly that order's first one and when it can next be claimed;
 * a database migrated before it gets its lanes from the events it holds; and on PostgreSQL an event
 * written while its order's head is being delivered in another transaction is never left without
 * a lane, in either order of the two.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Kysely, Migrator, PostgresDialect, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { DATABASE_KINDS, freshDatabase, freshStoreEachTest, TEST_DATABASE_URL } from '../helpers/stores.js';
import { migrations } from '../../src/storage/kysely/migrations.js';
import type { KyselyBackedStore } from '../../src/storage/kysely/store.js';
import { seededRandom } from '../helpers/random.js';
import { outboxEvent } from '../helpers/outbox.js';
import type { Store } from '../../src/storage/contract.js';
import type { OutboxEvent, OutboxLane } from '../../src/model/delivery.js';

const T0 = new Date('2026-11-22T03:00:00.000Z');

const ev = (orderKey: string, lane: OutboxLane = 'erp') => outboxEvent(orderKey, { lane });

interface Lane {
  key: string;
  head: number;
  due: string | null;
}

/** The lanes as the events say they must be: each order's first undelivered event and when it can be claimed. */
async function derivedLanes(db: Kysely<unknown>): Promise<Lane[]> {
  const rows = await sql<{
    seq: number;
    account: string;
    lane: string;
    order_key: string;
    state: string;
    next_attempt_at: string;
    lease_until: string | null;
  }>`select seq, account, lane, order_key, state, next_attempt_at, lease_until from outbox_events
     where state in ('pending', 'failed', 'dead') order by seq`.execute(db);
  const first = new Map<string, Lane>();
  for (const r of rows.rows) {
    const key = `${r.account}|${r.lane}|${r.order_key}`;
    if (first.has(key)) continue;
    const due =
      r.state === 'dead'
        ? null
        : r.lease_until !== null && r.lease_until > r.next_attempt_at
          ? r.lease_until
          : r.next_attempt_at;
    first.set(key, { key, head: Number(r.seq), due });
  }
  return [...first.values()].sort((a, b) => a.key.localeCompare(b.key));
}

async function storedLanes(db: Kysely<unknown>): Promise<Lane[]> {
  const rows = await sql<{ account: string; lane: string; order_key: string; head_seq: number; due_at: string | null }>`
    select account, lane, order_key, head_seq, due_at from outbox_lanes`.execute(db);
  return rows.rows
    .map((r) => ({ key: `${r.account}|${r.lane}|${r.order_key}`, head: Number(r.head_seq), due: r.due_at }))
    .sort((a, b) => a.key.localeCompare(b.key));
}

describe.each(DATABASE_KINDS)('outbox lanes (%s)', (kind) => {
  let store: Store;
  let clock = T0;
  freshStoreEachTest(
    kind,
    (_d, s) => {
      store = s;
    },
    {
      open: () => {
        clock = T0;
        return { now: () => clock };
      },
    },
  );
  const dbOf = (s: Store) => (s as KyselyBackedStore).db as unknown as Kysely<unknown>;

  it('after 400 random writes of every kind, each check finds the lanes exactly as the events say', async () => {
    const db = dbOf(store);
    const next = seededRandom(20261127);
    const pick = <T>(xs: readonly T[]): T | undefined => xs[Math.floor(next() * xs.length)];
    const views = [store, store.forAccount('other')];
    const held = new Map<number, OutboxEvent>();
    const written: string[] = [];
    const ops: Record<string, () => Promise<unknown>> = {
      enqueue: async () => {
        const e = await pick(views)?.outbox.enqueue(
          ev(`O${Math.floor(next() * 5)}`, next() < 0.2 ? 'alert' : 'erp'),
          clock,
        );
        if (e) written.push(e.eventId);
      },
      claim: async () => {
        const v = pick(views);
        const mine = next() < 0.5;
        for (const e of await store.outbox.claimDue(
          'i',
          clock,
          30_000,
          1 + Math.floor(next() * 4),
          mine ? v?.account : undefined,
          next() < 0.2 ? 'alert' : 'erp',
        ))
          held.set(e.seq, e);
      },
      complete: async () => {
        const e = pick([...held.values()]);
        if (!e) return;
        held.delete(e.seq);
        const r = next();
        const state = r < 0.5 ? 'delivered' : r < 0.85 ? 'failed' : 'dead';
        await store.outbox.complete(e.seq, e.leaseToken, 'i', {
          state,
          nextAttemptAt:
            state === 'failed'
              ? new Date(clock.getTime() + 1_000 + Math.floor(next() * 60_000)).toISOString()
              : undefined,
          startedAt: clock.toISOString(),
          statusCode: state === 'delivered' ? 200 : 500,
          latencyMs: 1,
          error: state === 'delivered' ? null : 'HTTP 500',
        });
      },
      release: async () => {
        const e = pick([...held.values()]);
        if (!e) return;
        held.delete(e.seq);
        await store.outbox.release(e.seq, e.leaseToken);
      },
      retryNow: async () => {
        const id = pick(written);
        if (id) await store.outbox.retryNow(id, clock);
      },
      dueNow: async () => {
        const v = pick(views);
        if (v) await store.outbox.dueNow(v.account, clock, 'erp');
      },
      releaseAll: async () => {
        held.clear();
        await store.outbox.releaseAllLeases();
      },
      prune: async () => {
        await store.retention.pruneDelivered(clock.toISOString(), 3);
      },
      acknowledge: async () => {
        await store.feed.sequence(1);
        const [last] = (await store.feed.after(0, 1_000)).slice(-1);
        if (!last) return;
        await store.feed.handedOut(last.position);
        await store.feed.acknowledge(Math.ceil(last.position * next()), clock, 'puller');
      },
      // No writer of paylink's removes an undelivered event; a person cleaning up by hand might.
      removeByHand: async () => {
        const [row] = (
          await sql<{ seq: number }>`select seq from outbox_events where state <> 'delivered' order by seq`.execute(db)
        ).rows.slice(Math.floor(next() * 3));
        if (!row) return;
        held.delete(Number(row.seq));
        await sql`delete from delivery_attempts where event_seq = ${row.seq}`.execute(db);
        await sql`delete from outbox_events where seq = ${row.seq}`.execute(db);
      },
      tick: async () => {
        clock = new Date(clock.getTime() + Math.floor(next() * 40_000));
      },
    };
    const weights: Array<[string, number]> = [
      ['enqueue', 6],
      ['claim', 5],
      ['complete', 6],
      ['release', 1],
      ['retryNow', 1],
      ['dueNow', 1],
      ['releaseAll', 0.3],
      ['prune', 0.5],
      ['acknowledge', 0.4],
      ['removeByHand', 0.3],
      ['tick', 3],
    ];
    const total = weights.reduce((s, [, w]) => s + w, 0);
    const seen = new Set<string>();
    for (let step = 0; step < 400; step++) {
      let r = next() * total;
      const [name] = weights.find(([, w]) => (r -= w) < 0) ?? weights[0] ?? ['tick'];
      await ops[name]?.();
      seen.add(name);
      if (step % 10 === 9 || step === 399)
        expect(await storedLanes(db), `after step ${step} (${name})`).toEqual(await derivedLanes(db));
    }
    expect([...seen].sort()).toEqual(weights.map(([n]) => n).sort());
    // The run reached the states that matter: dead heads holding orders, and waiting events behind heads.
    const states = await sql<{ state: string }>`select distinct state from outbox_events`.execute(db);
    expect(states.rows.map((r) => r.state).sort()).toEqual(['dead', 'delivered', 'failed', 'pending']);
  });

  it('a claim takes heads only, in the order they can be claimed, with events behind them left alone', async () => {
    const a1 = await store.outbox.enqueue(ev('A'), T0);
    await store.outbox.enqueue(ev('A'), T0);
    const b1 = await store.outbox.enqueue(ev('B'), new Date(T0.getTime() + 1));
    const claimed = await store.outbox.claimDue('i', new Date(T0.getTime() + 5), 30_000, 10);
    expect(claimed.map((e) => e.seq)).toEqual([a1.seq, b1.seq]);
    // Both heads are leased: nothing is claimable until the leases end, and the next due time says so.
    expect(await store.outbox.claimDue('i', new Date(T0.getTime() + 10), 30_000, 10)).toEqual([]);
    expect(await store.outbox.nextDueAt()).toBe(new Date(T0.getTime() + 5 + 30_000).toISOString());
  });
});

describe.each(DATABASE_KINDS)('migration 042 on a database with events (%s)', (kind) => {
  it('gives each order with undelivered events its lane, and claims then keep each order in order', async () => {
    const d = freshDatabase(kind);
    const before = Object.fromEntries(Object.entries(migrations(kind)).filter(([name]) => name < '042'));
    const older =
      kind === 'postgres'
        ? new Kysely<unknown>({
            dialect: new PostgresDialect({
              pool: new pg.Pool({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${d.schema}` }),
            }),
          })
        : undefined;
    try {
      if (older) {
        await sql.raw(`create schema ${d.schema}`).execute(older);
        const { error } = await new Migrator({
          db: older,
          provider: { getMigrations: async () => before },
          allowUnorderedMigrations: true,
          migrationTableSchema: d.schema,
        }).migrateToLatest();
        expect(error).toBeUndefined();
      }
      // PostgreSQL: the events are written through the older migrations' connection. SQLite: the
      // store's own opening runs every migration, so the events are written with 042's work undone,
      // as a database of the version before holds them.
      const first = older ? undefined : await d.open({ now: () => T0 });
      const db = older ?? ((first as KyselyBackedStore).db as unknown as Kysely<unknown>);
      const at = (ms: number) => new Date(T0.getTime() + ms).toISOString();
      const put = async (orderKey: string, state: string, due: number, account = 'default') =>
        sql`insert into outbox_events (account, event_id, event_type, order_key, order_id, payload, state, attempts,
              next_attempt_at, lease_token, created_at, updated_at, retry_from)
            values (${account}, ${randomUUID()}, 'payment.status_changed', ${orderKey}, ${orderKey}, '{}', ${state}, 0,
              ${at(due)}, 0, ${at(0)}, ${at(0)}, ${at(0)})`.execute(db);
      try {
        if (first) {
          for (const t of ['insert', 'update', 'time', 'delete'])
            await sql.raw(`drop trigger outbox_lanes_on_${t}`).execute(db);
          await sql`delete from outbox_lanes`.execute(db);
        }
        await put('A', 'delivered', 0);
        await put('A', 'failed', 60_000);
        await put('A', 'pending', 0);
        await put('B', 'dead', 0);
        await put('B', 'pending', 0);
        await put('C', 'delivered', 0);
        await put('A', 'pending', 0, 'other');
        if (first) {
          // Back to the version before 042: its indexes, no lanes table, no triggers, 042 not recorded.
          await sql`drop table outbox_lanes`.execute(db);
          await sql`create index outbox_claimable_idx on outbox_events (next_attempt_at, seq) where state in ('pending', 'failed')`.execute(
            db,
          );
          await sql`create index outbox_lane_claimable_idx on outbox_events (account, lane, next_attempt_at, seq) where state in ('pending', 'failed')`.execute(
            db,
          );
          await sql`create index outbox_leased_idx on outbox_events (lease_until) where lease_until is not null`.execute(
            db,
          );
          await sql`delete from kysely_migration where name = '042_outbox_lanes'`.execute(db);
        }
      } finally {
        await first?.close();
      }
      let applied: string[] = [];
      const store = await d.open({ now: () => T0, onMigrated: (o) => (applied = o.applied) });
      try {
        expect(applied).toEqual(['042_outbox_lanes']);
        const sdb = (store as KyselyBackedStore).db as unknown as Kysely<unknown>;
        const lanes = await storedLanes(sdb);
        expect(lanes).toEqual(await derivedLanes(sdb));
        expect(lanes.map((l) => [l.key, l.due])).toEqual([
          ['default|erp|A', at(60_000)],
          ['default|erp|B', null],
          ['other|erp|A', at(0)],
        ]);
        // A's failed head is not due for a minute, B's is dead: only the other account's A goes now.
        const now = await store.outbox.claimDue('i', new Date(T0.getTime() + 1_000), 600_000, 10);
        expect(now.map((e) => `${e.account}|${e.orderKey}|${e.state}`)).toEqual(['other|A|pending']);
        const later = await store.outbox.claimDue('i', new Date(T0.getTime() + 61_000), 30_000, 10);
        expect(later.map((e) => `${e.account}|${e.orderKey}|${e.state}`)).toEqual(['default|A|failed']);
      } finally {
        await store.close();
      }
    } finally {
      await older?.destroy();
      await d.dispose();
    }
  });
});

describe.skipIf(!TEST_DATABASE_URL)('outbox lanes under concurrent writers (postgres)', () => {
  type Step = [pg.Client, string, unknown[]];

  /**
   * Two connections of one fresh schema, each in an open transaction: `first` runs and holds its
   * transaction while `second` runs (and waits for it where the database makes it wait), then both
   * commit, in that order. Returns the lanes as stored and as the events say, and what `pick`
   * makes of the two statements' results.
   */
  async function twoWriters(
    setUp: (store: Store) => Promise<number[]>,
    steps: (seqs: number[], clients: [pg.Client, pg.Client]) => [Step, Step],
    pick: (results: [pg.QueryResult, pg.QueryResult], seqs: number[]) => number,
  ): Promise<{ lanes: Lane[]; derived: Lane[]; second: number }> {
    const d = freshDatabase('postgres');
    const store = await d.open({ now: () => T0 });
    const clients: [pg.Client, pg.Client] = [0, 1].map(
      () => new pg.Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${d.schema}` }),
    ) as [pg.Client, pg.Client];
    try {
      const seqs = await setUp(store);
      await Promise.all(clients.map((c) => c.connect()));
      for (const c of clients) await c.query('begin');
      const [[one, oneSql, oneArgs], [two, twoSql, twoArgs]] = steps(seqs, clients);
      const firstResult = await one.query(oneSql, oneArgs);
      const waiting = two.query(twoSql, twoArgs);
      await new Promise((r) => setTimeout(r, 200));
      await one.query('commit');
      const secondResult = await waiting;
      await two.query('commit');
      const db = (store as KyselyBackedStore).db as unknown as Kysely<unknown>;
      return {
        lanes: await storedLanes(db),
        derived: await derivedLanes(db),
        second: pick([firstResult, secondResult], seqs),
      };
    } finally {
      await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
      await store.close();
      await d.dispose();
    }
  }

  /** Order A's head, leased; with `behind`, a second event of A written after it. */
  const headOfA = (behind: boolean) => async (store: Store) => {
    const head = await store.outbox.enqueue(ev('A'), T0);
    const second = behind ? await store.outbox.enqueue(ev('A'), T0) : undefined;
    const [claimed] = await store.outbox.claimDue('i', T0, 30_000, 10);
    expect(claimed?.seq).toBe(head.seq);
    return second ? [head.seq, second.seq] : [head.seq];
  };
  const DELIVERED = `update outbox_events set state = 'delivered', lease_until = null, lease_owner = null where seq = $1`;
  const INSERT = `insert into outbox_events (account, event_id, event_type, order_key, order_id, payload, state, attempts,
      next_attempt_at, lease_token, created_at, updated_at, retry_from)
    values ('default', $1, 'payment.status_changed', 'A', 'A', '{}', 'pending', 0, $2, 0, $2, $2, $2) returning seq`;
  const RETIMED = `update outbox_events set next_attempt_at = $2 where seq = $1`;
  const LATER = new Date(T0.getTime() + 5_000).toISOString();

  /** The head delivered, and A's next event written, in the order given. */
  const race = (first: 'deliver' | 'write') =>
    twoWriters(
      headOfA(false),
      ([head], [c1, c2]) => {
        const deliver: Step = [c1, DELIVERED, [head]];
        const write: Step = [c2, INSERT, [randomUUID(), T0.toISOString()]];
        return first === 'deliver' ? [deliver, write] : [write, deliver];
      },
      (results) => Number(results[first === 'deliver' ? 1 : 0].rows[0]?.seq),
    );

  /** The head delivered, and the event behind it given another time (as an endpoint's backlog made due at once is), in the order given. */
  const retimeRace = (first: 'deliver' | 'retime') =>
    twoWriters(
      headOfA(true),
      ([head, behind], [c1, c2]) => {
        const deliver: Step = [c1, DELIVERED, [head]];
        const retime: Step = [c2, RETIMED, [behind, LATER]];
        return first === 'deliver' ? [deliver, retime] : [retime, deliver];
      },
      (_results, [, behind]) => behind ?? 0,
    );

  for (const first of ['deliver', 'retime'] as const)
    it(`the head delivered and the event behind it given another time, ${first === 'deliver' ? 'the delivery' : 'the new time'} first: the lane names that event at its new time`, async () => {
      const { lanes, derived, second } = await retimeRace(first);
      expect(lanes).toEqual(derived);
      expect(lanes).toEqual([
        { key: 'default|erp|A', head: second, due: new Date(T0.getTime() + 5_000).toISOString() },
      ]);
    });

  it('the head delivered first, the next event written while it was uncommitted: the lane moves to it', async () => {
    const { lanes, derived, second } = await race('deliver');
    expect(lanes).toEqual(derived);
    expect(lanes).toEqual([{ key: 'default|erp|A', head: second, due: T0.toISOString() }]);
  });

  it('the next event written first, the head delivered while it was uncommitted: the lane moves to it', async () => {
    const { lanes, derived, second } = await race('write');
    expect(lanes).toEqual(derived);
    expect(lanes).toEqual([{ key: 'default|erp|A', head: second, due: T0.toISOString() }]);
  });
});
