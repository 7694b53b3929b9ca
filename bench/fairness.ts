/**
 * Accounts fairness: account A's ERP refuses connections with a backlog of A's events due, while
 * account B's events are written at a steady rate; B's delay (written → B's ERP has it) is
 * measured. In process, over the real store and outbox worker; a few seconds.
 */
import net from 'node:net';
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { loadConfig } from '../src/config/env.js';
import { createServices } from '../src/services.js';
import { openStore } from '../src/storage/kysely/store.js';
import { epochMs, startReceiver, waitFor } from './procs.js';
import { freshDatabase } from './seed.js';
import type { Figures } from './scenarios.js';

async function refusedUrl(): Promise<string> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((r) => srv.close(r));
  return `http://127.0.0.1:${port}/erp`;
}

const event = (account: string, orderId: string) => ({
  eventId: randomUUID(),
  eventType: 'payment.status_changed',
  orderKey: orderId,
  orderId,
  mercantId: account,
  statusVersion: 1,
  payload: JSON.stringify({ account, order_id: orderId }),
});

export async function benchFairness(
  kind: 'sqlite' | 'postgres',
  tmp: string,
  o: { backlog: number; events: number; rate: number },
  adminUrl?: string,
): Promise<Figures> {
  const db = await freshDatabase(kind, tmp, adminUrl);
  const rx = await startReceiver();
  const logger = pino({ level: 'silent' });
  const store = await openStore(db.config);
  const services = createServices(
    { ...loadConfig({ PORT: '0', DATA_DIR: db.env.DATA_DIR ?? tmp }), database: db.config },
    { logger, store, operator: { user: 'bench', pass: randomUUID() } },
  );
  try {
    for (const id of ['shop-a', 'shop-b']) await store.accounts.insert({ id, name: id, merchantId: null }, new Date());
    const url = { 'shop-a': await refusedUrl(), 'shop-b': rx.url };
    for (const [id, notify] of Object.entries(url)) {
      const rc = services.runtimeConfig.forAccount(id);
      const { version } = await rc.overrides();
      await rc.save({ erp: { notify_url: notify } }, version, 'bench');
    }
    const a = store.forAccount('shop-a');
    for (let i = 0; i < o.backlog; i++) await a.outbox.enqueue(event('shop-a', `A-${i}`));
    services.outbox.start();
    const b = store.forAccount('shop-b');
    const written = new Map<string, number>();
    const t0 = epochMs();
    for (let i = 0; i < o.events; i++) {
      const at = t0 + (i * 1000) / o.rate;
      await new Promise((r) => setTimeout(r, Math.max(0, at - epochMs())));
      written.set(`B-${i}`, epochMs());
      await b.outbox.enqueue(event('shop-b', `B-${i}`));
      services.outbox.wake();
    }
    await waitFor(() => rx.received() >= o.events, 30_000);
    const lat = [...written]
      .map(([id, t]) => (rx.arrivals.get(id) ?? Number.POSITIVE_INFINITY) - t)
      .sort((x, y) => x - y);
    const pct = (p: number) => lat[Math.min(lat.length - 1, Math.floor((p / 100) * lat.length))] ?? 0;
    return {
      fairness_rate: o.rate,
      fairness_backlog: o.backlog,
      fairness_b_p50_ms: pct(50),
      fairness_b_p99_ms: pct(99),
      fairness_missing: lat.filter((x) => !Number.isFinite(x)).length,
    };
  } finally {
    await services.close();
    await rx.close();
    await db.drop();
  }
}
