/**
 * What the ERP's recovery costs the database: `dueNow` on a down ERP's backlog, on a fresh
 * database of its own. `n` orders each with one event never tried (written an hour ago, due since),
 * and `failed` orders whose event failed and is retried in an hour (the attempts made before the
 * breaker opened). Prints the events moved and the ms of the one call, then checks that a claim
 * takes the failed heads first (they were written first).
 *
 *   npx tsx bench/due-now.ts sqlite|postgres [n …]
 *
 * PostgreSQL needs BENCH_DATABASE_URL (a database is created and dropped).
 */
import { eachFreshDatabase } from './seed.js';
import { openStore } from '../src/storage/kysely/store.js';

const kind = process.argv[2] === 'postgres' ? 'postgres' : 'sqlite';
const sizes = process.argv
  .slice(3)
  .map(Number)
  .filter((n) => n > 0);
const FAILED = 32;

await eachFreshDatabase(kind, sizes.length > 0 ? sizes : [1_000, 10_000, 100_000], async (n, db) => {
  const store = await openStore(db.config);
  try {
    const now = Date.now();
    const iso = (ms: number) => new Date(ms).toISOString();
    const event = (k: number) => {
      const failed = k < FAILED;
      // The failed ones were written first: the backlog's written order starts with them.
      const written = iso(now - 3_600_000 + k);
      return {
        event_id: `due-${k}`,
        event_type: 'payment.status_changed',
        order_key: `DUE-${k}`,
        order_id: `DUE-${k}`,
        mercant_id: 'DUE',
        status_version: 1,
        payload: '{}',
        state: failed ? 'failed' : 'pending',
        attempts: failed ? 1 : 0,
        next_attempt_at: failed ? iso(now + 3_600_000) : written,
        lease_token: failed ? 1 : 0,
        created_at: written,
        updated_at: written,
        retry_from: written,
      };
    };
    for (let i = 0; i < n + FAILED; i += 2000)
      await store.db
        .insertInto('outbox_events')
        .values(Array.from({ length: Math.min(n + FAILED, i + 2000) - i }, (_, k) => event(i + k)))
        .execute();
    const t0 = performance.now();
    const moved = await store.outbox.dueNow('default', new Date(now));
    const ms = performance.now() - t0;
    const first = await store.outbox.claimDue('bench', new Date(now), 30_000, FAILED);
    if (first.some((e) => e.state !== 'failed') || first.length !== FAILED)
      throw new Error('the failed heads, written first, were not claimed first');
    console.log(`${kind} ${n} waiting + ${FAILED} failed: dueNow moved ${moved} events in ${ms.toFixed(1)} ms`);
  } finally {
    await store.close();
  }
});
