/**
 * A pull waiting on the feed wakes when a notification's commit makes an event: on one instance
 * (the in-process wake), and on PostgreSQL across two instances of one database (LISTEN/NOTIFY).
 * Each service's feed polls only every ten minutes here, so a 20-second wait that answers with
 * the event was woken by it: the pull itself reports `woken`.
 */
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS, TEST_DATABASE_URL } from '../helpers/stores.js';
import { startE2E, type E2EContext } from '../helpers/e2e.js';
import { appOver, type AppInstance } from '../helpers/services.js';
import { pullErpEvents } from '../../src/domain/erp-events/feed.js';

const KEY = 'erp-key-feed-wake-0123456789';
const auth = { authorization: `Bearer ${KEY}` };
const SLOW_POLL = { feed: { pollMs: 600_000, livePollMs: 600_000 } };
const WAIT_S = 20;

interface Page {
  data: Array<{ cursor: string; event: { order_id: string; status: string } }>;
  next_cursor: string;
}

async function paid(e: E2EContext, orderId: string): Promise<void> {
  const res = await fetch(`${e.url}/api/charge`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ order_id: orderId, nominal: 50_000, payment_type: 'qris' }),
  });
  expect(res.status).toBe(201);
  const { gateway_order_id } = (await res.json()) as { gateway_order_id: string };
  // The simulator notifies the service, which confirms with the status API and commits the event.
  expect((await e.sim.post(`/_sim/transactions/${gateway_order_id}/pay`)).status).toBe(200);
}

async function start(e: E2EContext): Promise<string> {
  const res = await fetch(`${e.url}/api/erp-events`, { headers: auth });
  expect(res.status).toBe(200);
  return ((await res.json()) as Page).next_cursor;
}

describe.each(DATABASE_KINDS)('the pull feed wakes on a commit (%s)', (kind) => {
  let e: E2EContext;
  beforeEach(async () => {
    e = await startE2E(kind, { listen: true, env: { API_KEYS: KEY }, serviceOptions: SLOW_POLL });
  });
  afterEach(async () => {
    await e.close();
  });

  it('a pull waiting over HTTP answers with the event of a notification accepted meanwhile', async () => {
    const after = await start(e);
    const started = Date.now();
    const waiting = fetch(`${e.url}/api/erp-events?after=${encodeURIComponent(after)}&wait=${WAIT_S}`, {
      headers: auth,
    });
    await expect.poll(() => e.services.feed.waiting, { timeout: 10_000, interval: 5 }).toBe(1);
    await paid(e, 'WAKE-H1');
    const res = await waiting;
    expect(res.status).toBe(200);
    const page = (await res.json()) as Page;
    expect(page.data.map((d) => [d.event.order_id, d.event.status])).toEqual([['WAKE-H1', 'paid']]);
    // It polls every ten minutes and waited at most 20 s: only the commit's wake answers it before then.
    expect(Date.now() - started).toBeLessThan(WAIT_S * 1000);
  });

  it('the pull reports that the commit woke it, and a pull with nothing new waits out its time', async () => {
    const after = await start(e);
    const pull = pullErpEvents(e.services, { after, limit: 100, waitS: WAIT_S });
    await expect.poll(() => e.services.feed.waiting, { timeout: 10_000, interval: 5 }).toBe(1);
    await paid(e, 'WAKE-D1');
    const page = await pull;
    expect(page.answered).toBe('woken');
    expect(page.data.map((d) => JSON.parse(d.payload) as { order_id: string }).map((ev) => ev.order_id)).toEqual([
      'WAKE-D1',
    ]);
    // Nothing after it: a one-second wait ends empty, by its own time.
    const empty = await pullErpEvents(e.services, { after: page.nextCursor, limit: 100, waitS: 1 });
    expect(empty).toMatchObject({ data: [], nextCursor: page.nextCursor, answered: 'timeout' });
    // With events already there, the pull answers without waiting.
    const again = await pullErpEvents(e.services, { after, limit: 100, waitS: WAIT_S });
    expect(again.answered).toBe('at_once');
    expect(again.data).toHaveLength(1);
  });
});

describe.runIf(TEST_DATABASE_URL)('the pull feed across two instances of one PostgreSQL database', () => {
  let e: E2EContext;
  let second: AppInstance | undefined;
  beforeEach(async () => {
    e = await startE2E('postgres', { listen: true, env: { API_KEYS: KEY }, serviceOptions: SLOW_POLL });
  });
  afterEach(async () => {
    await second?.close();
    second = undefined;
    await e.close();
  });

  it('an event committed on instance 1 wakes a pull waiting on instance 2', async () => {
    const logger = pino({ level: 'silent' });
    const store = await e.db.open({ logger });
    second = await appOver(e.services.config, { logger, store }, SLOW_POLL);
    const other = second.services;
    const after = await start(e);
    const pull = pullErpEvents(other, { after, limit: 100, waitS: WAIT_S });
    await expect.poll(() => other.feed.waiting, { timeout: 10_000, interval: 5 }).toBe(1);
    // Instance 2 listens before instance 1 commits, so the wake can only come from instance 1's word.
    await expect.poll(() => other.store.signals.live, { timeout: 10_000, interval: 5 }).toBe(true);
    await paid(e, 'WAKE-X1');
    const page = await pull;
    expect(page.answered).toBe('woken');
    expect(page.data.map((d) => (JSON.parse(d.payload) as { order_id: string }).order_id)).toEqual(['WAKE-X1']);
  });
});
