/**
 * The pull feed for ERPs that cannot receive webhooks, over real HTTP against the simulator: what a
 * push would carry, byte for byte, in order per order; acknowledgements count as delivery, for what
 * a pull handed out only; cursors of another database, altered ones, and ones later than the clock
 * allows are refused; a waiting pull answers when an event arrives.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { startE2E, type E2EContext } from '../helpers/e2e.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';
import { patchRuntimeConfig } from '../helpers/seed.js';
import { FEED_CLOCK_SLACK_MS, encodeFeedCursor, feedClockFloor } from '../../src/domain/erp-events/feed.js';

const KEY = 'erp-key-feed-0123456789';
const SECRET = 'raw-erp-secret-for-the-feed-0123';
const auth = { authorization: `Bearer ${KEY}` };

interface Page {
  data: Array<{
    cursor: string;
    event: { event_id: string; order_id: string; status: string; status_version: number };
  }>;
  next_cursor: string;
}

describe.each(DATABASE_KINDS)('GET /api/erp-events and POST /api/erp-events/ack (%s)', (kind) => {
  let e: E2EContext;
  let other: E2EContext | undefined;
  let erp: ErpReceiver | undefined;
  // Real time unless a test sets it: a machine whose clock is wrong.
  const clock = { setTo: undefined as Date | undefined, now: (): Date => clock.setTo ?? new Date() };
  beforeEach(async () => {
    clock.setTo = undefined;
    e = await startE2E(kind, {
      listen: true,
      env: { API_KEYS: KEY },
      serviceOptions: { runtimeConfigCacheMs: 0, clock },
    });
  });
  afterEach(async () => {
    await other?.close();
    other = undefined;
    await erp?.close();
    erp = undefined;
    await e.close();
  });

  const pull = async (ctx: E2EContext, query: string) => {
    const res = await fetch(`${ctx.url}/api/erp-events${query}`, { headers: auth });
    return { status: res.status, text: await res.text() };
  };
  const page = async (query: string): Promise<Page> => {
    const r = await pull(e, query);
    expect(r.status).toBe(200);
    return JSON.parse(r.text) as Page;
  };
  const ack = (cursor: string) =>
    fetch(`${e.url}/api/erp-events/ack`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ cursor }),
    });
  async function paid(orderId: string): Promise<void> {
    const res = await fetch(`${e.url}/api/charge`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ order_id: orderId, nominal: 50_000, payment_type: 'qris' }),
    });
    expect(res.status).toBe(201);
    const { gateway_order_id } = (await res.json()) as { gateway_order_id: string };
    expect((await e.sim.post(`/_sim/transactions/${gateway_order_id}/pay`)).status).toBe(200);
    await expect
      .poll(async () => (await e.services.store.transactions.findByOrderId(orderId))?.status, {
        timeout: 5_000,
        interval: 20,
      })
      .toBe('paid');
  }

  it('pull only: every event once, in order per order, each byte for byte the stored body; acknowledged ones count as delivered', async () => {
    for (const id of ['FEED-1', 'FEED-2', 'FEED-3']) await paid(id);
    // A refund of the first: its order now has two events, which must come in the order written.
    expect(
      (
        await fetch(`${e.url}/api/payments/FEED-1/refund`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ amount: 1_000 }),
        })
      ).status,
    ).toBe(200);
    const first = await pull(e, '?limit=2');
    const one = JSON.parse(first.text) as Page;
    expect(one.data).toHaveLength(2);
    const restRaw = await pull(e, `?after=${encodeURIComponent(one.next_cursor)}&limit=500`);
    const rest = JSON.parse(restRaw.text) as Page;
    const events = [...one.data, ...rest.data].map((d) => d.event);
    expect(new Set(events.map((ev) => ev.event_id)).size).toBe(events.length);
    expect(events.filter((ev) => ev.order_id === 'FEED-1').map((ev) => ev.status)).toEqual([
      'paid',
      'partially_refunded',
    ]);
    for (const id of ['FEED-2', 'FEED-3'])
      expect(events.filter((ev) => ev.order_id === id).map((ev) => ev.status)).toEqual(['paid']);
    // Byte for byte: each event in the answer is the stored body, as a push would send it.
    const stored = (await e.services.store.outbox.list({ limit: 500 })).items;
    expect(stored).toHaveLength(events.length);
    for (const s of stored) expect(first.text + restRaw.text).toContain(`"event":${s.payload}}`);
    // Nothing new: the same cursor comes back.
    const empty = await page(`?after=${encodeURIComponent(rest.next_cursor)}`);
    expect(empty).toEqual({ data: [], next_cursor: rest.next_cursor });
    // Acknowledged up to the first page: those two are delivered, the others still wait.
    const acked = await ack(one.next_cursor);
    expect(await acked.json()).toEqual({ acked: 2 });
    const states = await Promise.all(
      events.map(async (ev) => (await e.services.store.outbox.findByEventId(ev.event_id))?.state),
    );
    expect(states.filter((s) => s === 'delivered')).toHaveLength(2);
    expect(await (await ack(rest.next_cursor)).json()).toEqual({ acked: events.length - 2 });
    expect(await (await ack(rest.next_cursor)).json()).toEqual({ acked: 0 });
  });

  it('two pullers see the same sequence; a waiting pull answers when an event arrives', async () => {
    await paid('FEED-W1');
    const a = await page('');
    const b = await page('');
    expect(a).toEqual(b);
    const started = Date.now();
    const waiting = page(`?after=${encodeURIComponent(a.next_cursor)}&wait=10`);
    await new Promise((r) => setTimeout(r, 300));
    await paid('FEED-W2');
    const woke = await waiting;
    expect(woke.data.map((d) => d.event.order_id)).toContain('FEED-W2');
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('refuses altered cursors and cursors of another database (400), and bad limits', async () => {
    await paid('FEED-C1');
    const p = await page('');
    const good = p.next_cursor;
    const [body, sig] = good.split('.');
    const forgedBody = Buffer.from(
      Buffer.from(body ?? '', 'base64url')
        .toString('utf8')
        .replace(/\.\d+$/, '.999'),
    ).toString('base64url');
    for (const bad of [`${forgedBody}.${sig}`, `${body}.${'A'.repeat(22)}`, 'not-a-cursor', `${good}x`]) {
      const r = await pull(e, `?after=${encodeURIComponent(bad)}`);
      expect(r.status).toBe(400);
      expect(JSON.parse(r.text)).toMatchObject({ code: 'VALIDATION_FAILED' });
      expect((await ack(bad)).status).toBe(400);
    }
    other = await startE2E(kind, { listen: true, env: { API_KEYS: KEY } });
    const foreign = await pull(other, `?after=${encodeURIComponent(good)}`);
    expect(foreign.status).toBe(400);
    expect((await pull(e, '?limit=0')).status).toBe(400);
    expect((await pull(e, '?limit=501')).status).toBe(400);
    expect((await pull(e, '?wait=31')).status).toBe(400);
    expect((await fetch(`${e.url}/api/erp-events`)).status).toBe(401);
  });

  it('with pushing on as well, acknowledging an event already pushed changes nothing', async () => {
    erp = await startErpReceiver({ secret: SECRET });
    await patchRuntimeConfig(e.services.runtimeConfig, {
      erp: { notify_url: erp.url, webhook_secret: SECRET, timeout_ms: 2_000 },
    });
    e.services.outbox.start();
    await paid('FEED-P1');
    await erp.waitFor((r) => r.accepted().filter((d) => d.json?.order_id === 'FEED-P1').length === 1);
    await expect.poll(async () => (await e.services.store.outbox.countByState()).delivered, { timeout: 5_000 }).toBe(1);
    const p = await page('');
    expect(p.data.map((d) => d.event.status)).toEqual(['paid']);
    expect(p.data.map((d) => d.event.event_id)).toEqual(
      erp
        .accepted()
        .filter((d) => d.json?.order_id === 'FEED-P1')
        .map((d) => d.json?.event_id),
    );
    expect(await (await ack(p.next_cursor)).json()).toEqual({ acked: 0 });
  });

  it('a cursor later than this server clock allows is refused (400), pulled or acknowledged, and nothing is delivered', async () => {
    await paid('FEED-K1');
    await paid('FEED-K2');
    const p = await page('');
    expect(p.data).toHaveLength(2);
    const delivered = async () => (await e.services.store.outbox.countByState()).delivered ?? 0;
    // The database restored onto a machine whose clock is behind (a flat clock battery): new events
    // would get positions below the ERP's saved cursor and be skipped, so the cursor is refused instead.
    clock.setTo = new Date('2001-01-01T00:00:00.000Z');
    const behind = await pull(e, `?after=${encodeURIComponent(p.next_cursor)}`);
    expect(behind.status).toBe(400);
    expect(JSON.parse(behind.text)).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect((await ack(p.next_cursor)).status).toBe(400);
    expect(await delivered()).toBe(0);
    clock.setTo = undefined;
    // Signed with this database's own key, but beyond the clock and its slack: no copy of it handed that out.
    const ahead = encodeFeedCursor(
      await e.services.store.feed.identity(),
      feedClockFloor(new Date(Date.now() + FEED_CLOCK_SLACK_MS + 60_000)),
    );
    expect((await pull(e, `?after=${encodeURIComponent(ahead)}`)).status).toBe(400);
    expect((await ack(ahead)).status).toBe(400);
    expect(await delivered()).toBe(0);
    expect(await (await ack(p.next_cursor)).json()).toEqual({ acked: 2 });
  });

  it('an acknowledgement covers only what a pull handed out: the events beyond it are still pushed', async () => {
    for (const id of ['FEED-H1', 'FEED-H2', 'FEED-H3']) await paid(id);
    // Gives all three their positions, hands out the first only.
    const first = await page('?limit=1');
    expect(first.data.map((d) => d.event.order_id)).toEqual(['FEED-H1']);
    // The third event's cursor, signed with this database's key as the original of a restored copy
    // would have handed it out; no pull here handed it out.
    const positions = (await e.services.store.feed.after(0, 10)).map((f) => f.position);
    expect(positions).toHaveLength(3);
    const beyond = encodeFeedCursor(await e.services.store.feed.identity(), positions[2] ?? 0);
    expect(await (await ack(beyond)).json()).toEqual({ acked: 1 });
    expect(await (await ack(beyond)).json()).toEqual({ acked: 0 });
    erp = await startErpReceiver({ secret: SECRET });
    await patchRuntimeConfig(e.services.runtimeConfig, {
      erp: { notify_url: erp.url, webhook_secret: SECRET, timeout_ms: 2_000 },
    });
    e.services.outbox.start();
    await expect
      .poll(async () => (await e.services.store.outbox.countByState()).delivered, { timeout: 10_000 })
      .toBe(3);
    expect(
      erp
        .accepted()
        .map((d) => d.json?.order_id)
        .sort(),
    ).toEqual(['FEED-H2', 'FEED-H3']);
  });
});
