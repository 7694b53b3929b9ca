/**
 * The outbox under steady load on PostgreSQL, for its vacuum: events enqueued at a fixed rate,
 * claimed and delivered as they come (the store's own statements, 16 a round, `nextDueAt` after
 * each round as the worker asks it), for a given time. Prints, every 10 s, what was delivered and
 * the mean and p99 of `nextDueAt` (one round trip, the next-due walk's own time included); at the
 * end the table's `pg_stat_user_tables` row (dead rows, HOT updates, autovacuum runs), its
 * storage parameters, and `EXPLAIN ANALYZE` of the next-due walk.
 *
 *   npx tsx scripts/outbox-vacuum.ts postgres://postgres@127.0.0.1:5432/test [rate/s] [seconds] [--reset] [--seed n]
 *
 * `--seed n` first writes n delivered events (a table that keeps its history: the default rule
 * waits for dead rows to reach a fifth of the live ones), then vacuums and analyzes the table.
 * Every 10 s it also prints the walk's execution time and shared buffers from `EXPLAIN (ANALYZE,
 * BUFFERS)`: the buffers do not depend on the machine's load.
 *
 * `--reset` drops the table's storage parameters after migrating (the server's autovacuum rule
 * alone), to compare with the migrated ones on the same code. Autovacuum must be on on the server
 * (`show autovacuum`) for either to vacuum at all; it visits a database at most every
 * `autovacuum_naptime` (1 min by default), so runs shorter than a few minutes say little.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { openStore } from '../src/storage/kysely/store.js';

const args = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && all[i - 1] !== '--seed');
const url = args[0] ?? 'postgres://postgres@127.0.0.1:5432/test';
const rate = Number(args[1] ?? '200');
const seconds = Number(args[2] ?? '180');
const reset = process.argv.includes('--reset');
const seedAt = process.argv.indexOf('--seed');
const seed = seedAt >= 0 ? Number(process.argv[seedAt + 1] ?? '0') : 0;
const schema = `vac_${randomBytes(4).toString('hex')}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The next-due query as `nextDueAt` sends it (without an index hint): the lanes' first time. */
const NEXT_FREE = `select min(h.due_at) as due from outbox_lanes h where h.due_at is not null`;

async function main(): Promise<void> {
  const store = await openStore({ kind: 'postgres', url }, { schema });
  const admin = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` });
  await admin.connect();
  try {
    if (reset)
      await admin.query(
        'alter table outbox_events reset (autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold, autovacuum_vacuum_cost_delay, autovacuum_analyze_scale_factor, fillfactor)',
      );
    if (seed > 0) {
      await admin.query(
        `insert into outbox_events (event_id, event_type, order_key, order_id, mercant_id, status_version, payload, state,
           attempts, next_attempt_at, created_at, updated_at, delivered_at)
         select 'seed-' || i, 'payment.status_changed', 'S-' || i, 'S-' || i, 'M', 1, '{"order":"S-' || i || '"}', 'delivered',
           1, $2, $2, $2, $2
         from generate_series(1, $1::int) i`,
        [seed, new Date(Date.now() - 86_400_000).toISOString()],
      );
      await admin.query('vacuum analyze outbox_events');
    }
    let enqueued = 0;
    let delivered = 0;
    let stop = false;
    const started = performance.now();
    const producer = (async () => {
      while (!stop) {
        const due = Math.floor(((performance.now() - started) / 1000) * rate);
        const batch: Promise<unknown>[] = [];
        while (enqueued < due && batch.length < 64) {
          const order = `O-${enqueued % 5000}-${Math.floor(enqueued / 5000)}`;
          batch.push(
            store.outbox.enqueue({
              eventId: randomUUID(),
              eventType: 'payment.status_changed',
              orderKey: order,
              orderId: order,
              mercantId: 'M',
              statusVersion: 1,
              payload: `{"order":"${order}","status":"settlement","nominal":150000}`,
            }),
          );
          enqueued++;
        }
        await Promise.all(batch);
        if (batch.length === 0) await sleep(5);
      }
    })();
    let walks: number[] = [];
    let window = performance.now();
    const consumer = (async () => {
      while (!stop) {
        const claimed = await store.outbox.claimDue('vac', new Date(), 30_000, 16);
        if (claimed.length > 0) {
          const at = new Date().toISOString();
          await store.outbox.completeMany(
            'vac',
            claimed.map((e) => ({
              seq: e.seq,
              leaseToken: e.leaseToken,
              result: { state: 'delivered' as const, startedAt: at, statusCode: 200, latencyMs: 3, error: null },
            })),
          );
          delivered += claimed.length;
        }
        const t0 = performance.now();
        await store.outbox.nextDueAt();
        walks.push(performance.now() - t0);
        if (claimed.length === 0) await sleep(10);
        if (performance.now() - window >= 10_000) {
          const sorted = [...walks].sort((a, b) => a - b);
          const mean = sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length);
          const p99 = sorted[Math.floor(sorted.length * 0.99)] ?? 0;
          const { rows } = await admin.query<{ dead: string; vac: string }>(
            `select n_dead_tup as dead, autovacuum_count as vac from pg_stat_user_tables where schemaname = $1 and relname = 'outbox_events'`,
            [schema],
          );
          const plan = await admin.query<{
            'QUERY PLAN': Array<{
              'Execution Time': number;
              Plan: { 'Shared Hit Blocks': number; 'Shared Read Blocks': number };
            }>;
          }>(`explain (analyze, buffers, format json) ${NEXT_FREE}`);
          const top = plan.rows[0]?.['QUERY PLAN'][0];
          console.log(
            `t=${Math.round((performance.now() - started) / 1000)}s enqueued ${enqueued} delivered ${delivered}; nextDueAt mean ${mean.toFixed(2)} ms p99 ${p99.toFixed(2)} ms (${sorted.length}); walk ${top?.['Execution Time'].toFixed(2)} ms ${(top?.Plan['Shared Hit Blocks'] ?? 0) + (top?.Plan['Shared Read Blocks'] ?? 0)} buffers; n_dead_tup ${rows[0]?.dead} autovacuums ${rows[0]?.vac}`,
          );
          walks = [];
          window = performance.now();
        }
      }
    })();
    await sleep(seconds * 1000);
    stop = true;
    await Promise.all([producer, consumer]);
    await store.close();
    await sleep(1_500);
    const stats = await admin.query(
      `select n_live_tup, n_dead_tup, n_tup_upd, n_tup_hot_upd, autovacuum_count, autoanalyze_count, last_autovacuum
       from pg_stat_user_tables where schemaname = $1 and relname = 'outbox_events'`,
      [schema],
    );
    console.log('pg_stat_user_tables', JSON.stringify(stats.rows[0]));
    const rel = await admin.query(
      `select c.reloptions from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = $1 and c.relname = 'outbox_events'`,
      [schema],
    );
    console.log('reloptions', JSON.stringify(rel.rows[0]?.reloptions));
    const plan = await admin.query(`explain (analyze, buffers) ${NEXT_FREE}`);
    for (const r of plan.rows as Array<Record<string, string>>) console.log(Object.values(r)[0]);
  } finally {
    await admin.query(`drop schema if exists ${schema} cascade`).catch(() => undefined);
    await admin.end();
  }
}

await main();
