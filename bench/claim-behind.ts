/**
 * The outbox's claim and next-due query with a down ERP's backlog, on a fresh database of its own:
 * `n` orders whose first event failed and is retried in an hour, each with a second event due now
 * waiting behind it (`bench/seed.ts`, `seedWaiting`). No event can be claimed; the figures are what
 * the worker pays to find that out, each poll. Prints ms per call (mean of the timed calls after a
 * warm-up) for each `n`.
 *
 *   npx tsx bench/claim-behind.ts sqlite|postgres [n …]
 *
 * PostgreSQL needs BENCH_DATABASE_URL (a database is created and dropped).
 */
import { randomBytes } from 'node:crypto';
import { eachFreshDatabase, seedWaiting } from './seed.js';
import { openStore } from '../src/storage/kysely/store.js';

const kind = process.argv[2] === 'postgres' ? 'postgres' : 'sqlite';
const sizes = process.argv
  .slice(3)
  .map(Number)
  .filter((n) => n > 0);

async function timeEach(n: number, fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await fn();
  return (performance.now() - t0) / n;
}

await eachFreshDatabase(kind, sizes.length > 0 ? sizes : [10, 10_000, 100_000], async (n, db) => {
  await seedWaiting(db.config, n, randomBytes(3).toString('hex'), true);
  const store = await openStore(db.config);
  try {
    const now = new Date();
    const claim = () => store.outbox.claimDue('bench', now, 30_000, 16);
    if ((await claim()).length !== 0) throw new Error('an event behind its order was claimed');
    await timeEach(5, claim);
    const reps = n >= 100_000 ? 20 : 100;
    const claimMs = await timeEach(reps, claim);
    const nextDueMs = await timeEach(reps, () => store.outbox.nextDueAt());
    console.log(
      `${kind} ${n} orders, each with an event behind a failed one: claim ${claimMs.toFixed(3)} ms, next due ${nextDueMs.toFixed(3)} ms`,
    );
  } finally {
    await store.close();
  }
});
