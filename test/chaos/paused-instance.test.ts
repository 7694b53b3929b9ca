/**
 * Two instances share one PostgreSQL outbox. One is SIGSTOPped while it holds leased events (some
 * already on their way to the ERP), stays stopped past its lease while the other takes the events
 * over and delivers them, then is SIGCONTed: it finishes its stale attempts, and every one of its
 * results is refused by the fencing token. The ERP may see an event again, always under its id.
 */
import { afterEach, describe, expect, it } from 'vitest';
import path from 'node:path';
import { startSimulator } from '../../simulator/index.js';
import { startErpReceiver } from '../helpers/erp-receiver.js';
import { startServiceProcess, stopServiceProcess, type ServiceProcess } from '../helpers/child.js';
import { TEST_DATABASE_URL } from '../helpers/stores.js';
import { openStore, type KyselyBackedStore } from '../../src/storage/kysely/store.js';
import {
  CHAOS_SERVER_KEY,
  OP,
  SEED,
  chaosDatabase,
  gatewayEnv,
  notificationFor,
  paidOrder,
  postJson,
  postNotification,
  reportFigures,
  scaled,
  waitUntil,
  START_MS,
} from './support.js';

const ERP_SECRET = 'chaos-paused-erp-secret-0123456789';
const ORDERS = scaled(60, 20);

/** `host:pid:random`: the outbox names its instance after the process. */
const ownedBy = (owner: string | null, pid: number | undefined) =>
  owner !== null && owner.split(':')[1] === String(pid);

async function heldBy(store: KyselyBackedStore, pid: number | undefined): Promise<number[]> {
  const rows = await store.db
    .selectFrom('outbox_events')
    .select(['seq', 'lease_owner'])
    .where('state', 'in', ['pending', 'failed'])
    .where('lease_until', '>', new Date().toISOString())
    .execute();
  return rows.filter((r) => ownedBy(r.lease_owner, pid)).map((r) => Number(r.seq));
}

describe.skipIf(!TEST_DATABASE_URL)('a paused instance (PostgreSQL, two instances)', () => {
  const closers: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const c of closers.splice(0).reverse()) await c();
  });

  it('SIGSTOPped past its lease while holding events, then SIGCONTed: it cannot complete what the other now owns; nothing under a second id', async () => {
    const db = await chaosDatabase('postgres');
    closers.push(() => db.dispose());
    const erp = await startErpReceiver({ secret: ERP_SECRET });
    closers.push(() => erp.close());
    // Slow answers: the paused instance has deliveries in flight when it stops.
    erp.setMode({ kind: 'slow', delayMs: 600 });
    const sim = await startSimulator({ serverKey: CHAOS_SERVER_KEY, logger: false, seed: SEED });
    closers.push(() => sim.close());
    const env = (name: string) => ({
      ...gatewayEnv(sim.baseUrl),
      ...db.env,
      DATA_DIR: db.dir,
      LOG_DIR: path.join(db.dir, `logs-${name}`),
      log_user: OP.user,
      log_pass: OP.pass,
      ERP_NOTIFY_URL: erp.url,
      ERP_WEBHOOK_SECRET: ERP_SECRET,
    });
    const a: ServiceProcess = await startServiceProcess(env('a'), START_MS);
    closers.push(async () => {
      a.proc.kill('SIGCONT');
      await stopServiceProcess(a, 'SIGKILL');
    });
    const b: ServiceProcess = await startServiceProcess(env('b'), START_MS);
    closers.push(() => stopServiceProcess(b, 'SIGKILL'));
    // Lease = 2 × (timeout + 1 s) + 5 s = 9 s: the pause below outlasts it by waiting for B's work.
    expect(await postJson(`${a.url}/api/config`, { erp: { timeout_ms: 1_000 } })).toBe(200);
    const store = await openStore(db.config);
    closers.push(() => store.close());

    for (let i = 0; i < ORDERS; i++) {
      const orderId = `PAUSE-${i}`;
      await paidOrder(sim.baseUrl, orderId, 30_000 + i);
      // Both instances ingest; both deliver.
      expect(await postNotification(i % 2 === 0 ? a.url : b.url, await notificationFor(sim.baseUrl, orderId))).toBe(
        200,
      );
    }

    let held: number[] = [];
    await waitUntil(
      'instance A holds leased events',
      60_000,
      async () => (held = await heldBy(store, a.proc.pid)).length > 0,
      20,
    );
    a.proc.kill('SIGSTOP');
    // What A holds now (it cannot change while it is stopped).
    held = await heldBy(store, a.proc.pid);
    const inFlightAtErp = erp.deliveries.length;

    // B takes the held events over once A's lease has run out, and delivers every event.
    await waitUntil(
      'every event delivered by B while A is stopped',
      120_000,
      async () => {
        const rows = await store.db.selectFrom('outbox_events').select('state').execute();
        return rows.length === ORDERS && rows.every((r) => r.state === 'delivered');
      },
      250,
    );
    const takenOver = await store.db
      .selectFrom('delivery_attempts')
      .select(['event_seq', 'instance', 'outcome'])
      .where('event_seq', 'in', held.length > 0 ? held : [-1])
      .where('outcome', '=', 'delivered')
      .execute();
    expect(takenOver.every((t) => !ownedBy(t.instance, a.proc.pid))).toBe(true);

    a.proc.kill('SIGCONT');
    // A wakes up with the results of its stale attempts and tries to record them: refused.
    await waitUntil(
      "A's stale results recorded as rejected",
      60_000,
      async () => {
        const rows = await store.db
          .selectFrom('delivery_attempts')
          .select(['event_seq', 'instance', 'outcome'])
          .where('event_seq', 'in', held)
          .execute();
        const fromA = rows.filter((r) => ownedBy(r.instance, a.proc.pid));
        return held.every((seq) => fromA.some((r) => Number(r.event_seq) === seq));
      },
      250,
    );
    const attempts = await store.db
      .selectFrom('delivery_attempts')
      .select(['event_seq', 'instance', 'outcome'])
      .execute();
    const fromAOnHeld = attempts.filter((r) => ownedBy(r.instance, a.proc.pid) && held.includes(Number(r.event_seq)));
    const events = await store.db
      .selectFrom('outbox_events')
      .select(['seq', 'event_id', 'state', 'order_key'])
      .execute();

    const accepted = erp.accepted();
    const acceptedIds = new Set(accepted.map((d) => d.webhookId));
    const idsPerOrder = new Map<string, Set<string>>();
    for (const d of accepted)
      idsPerOrder.set(
        String(d.json?.order_id),
        (idsPerOrder.get(String(d.json?.order_id)) ?? new Set()).add(String(d.webhookId)),
      );
    const underTwoIds = [...idsPerOrder.values()].filter((s) => s.size > 1).length;
    const lost = events.filter((e) => e.state !== 'delivered' || !acceptedIds.has(e.event_id));
    reportFigures('paused-instance', 'postgres', {
      events: events.length,
      held_when_paused: held.length,
      erp_requests_before_pause: inFlightAtErp,
      stale_results_rejected: fromAOnHeld.filter((r) => r.outcome === 'rejected_stale_lease').length,
      stale_results_accepted: fromAOnHeld.filter((r) => r.outcome !== 'rejected_stale_lease').length,
      lost: lost.length,
      duplicates: accepted.length - acceptedIds.size,
      duplicates_new_id: underTwoIds,
    });
    expect(held.length).toBeGreaterThan(0);
    expect(fromAOnHeld.length).toBeGreaterThanOrEqual(held.length);
    expect(fromAOnHeld.every((r) => r.outcome === 'rejected_stale_lease')).toBe(true);
    expect(events).toHaveLength(ORDERS);
    expect(lost).toEqual([]);
    expect(underTwoIds).toBe(0);
    expect(accepted.every((d) => d.verified === true)).toBe(true);
  }, 300_000);
});
