/**
 * The statements each hot path sends to the database, counted at the driver (every better-sqlite3
 * statement run, every query a pg client sends): a new confirmed notification, its duplicate, one
 * delivered ERP event, and a payment link's creation. A change that adds a statement (on
 * PostgreSQL, a round trip) to one of these paths fails here and must say what it buys. Each operation runs alone, so on SQLite its
 * group commit holds one member, which runs without a savepoint (begin, …, commit).
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { startE2E, type E2EContext } from '../helpers/e2e.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';
import { patchRuntimeConfig } from '../helpers/seed.js';

const KEY = 'erp-key-statements-0123456789';
const SECRET = 'raw-erp-secret-statements-0123456789';

/** Every statement text sent while `fn` runs. */
async function statementsDuring(fn: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const probe = new Database(':memory:');
  const stmt = Object.getPrototypeOf(probe.prepare('select 1')) as Record<string, unknown>;
  probe.close();
  const client = pg.Client.prototype as unknown as Record<string, unknown>;
  const patched: Array<[Record<string, unknown>, string, unknown]> = [];
  const wrap = (target: Record<string, unknown>, name: string, text: (self: unknown, args: unknown[]) => string) => {
    const original = target[name] as (...args: unknown[]) => unknown;
    patched.push([target, name, original]);
    target[name] = function (this: unknown, ...args: unknown[]) {
      seen.push(text(this, args).replace(/\s+/g, ' ').trim());
      return original.apply(this, args);
    };
  };
  for (const name of ['run', 'all', 'get', 'iterate']) wrap(stmt, name, (self) => (self as { source: string }).source);
  wrap(client, 'query', (_self, args) => {
    const q = args[0];
    return typeof q === 'string' ? q : String((q as { text?: string } | undefined)?.text ?? q);
  });
  try {
    await fn();
  } finally {
    for (const [target, name, original] of patched) target[name] = original;
  }
  return seen;
}

const short = (list: string[]) => list.map((s) => s.slice(0, 70));

async function waitUntil(ok: () => boolean, maxMs = 10_000): Promise<void> {
  for (const start = Date.now(); !ok(); await new Promise((r) => setTimeout(r, 10)))
    if (Date.now() - start > maxMs) throw new Error(`not true within ${maxMs} ms`);
}

describe.each(DATABASE_KINDS)('statements per hot path (%s)', (kind) => {
  let e: E2EContext;
  let erp: ErpReceiver;
  beforeEach(async () => {
    erp = await startErpReceiver({ secret: SECRET });
    e = await startE2E(kind, { env: { API_KEYS: KEY }, serviceOptions: { runtimeConfigCacheMs: 60_000 } });
  });
  afterEach(async () => {
    await e.close();
    await erp.close();
  });

  async function paidNotification(orderId: string): Promise<Record<string, unknown>> {
    const res = await e.app.inject({
      method: 'POST',
      url: '/api/charge',
      headers: { authorization: `Bearer ${KEY}` },
      payload: { order_id: orderId, nominal: 150000, payment_type: 'qris' },
    });
    expect(res.statusCode).toBe(201);
    const gatewayOrderId = (res.json() as { gateway_order_id: string }).gateway_order_id;
    expect((await e.sim.post(`/_sim/transactions/${gatewayOrderId}/pay`)).status).toBe(200);
    const sent = await e.sim.get(`/_sim/notifications?order_id=${encodeURIComponent(gatewayOrderId)}`);
    const found = (
      sent.body as { notifications: Array<{ transaction_status: string; payload: Record<string, unknown> }> }
    ).notifications.find((n) => n.transaction_status === 'settlement');
    if (!found) throw new Error('the simulator sent no settlement notification');
    return found.payload;
  }

  const post = (payload: Record<string, unknown>) =>
    e.app.inject({ method: 'POST', url: '/webhook/midtrans', payload }).then((r) => {
      expect(r.statusCode).toBe(200);
      return r.json() as { result?: string };
    });

  it('a new notification, its duplicate, and its delivered ERP event', async () => {
    await patchRuntimeConfig(e.services.runtimeConfig, {
      erp: { notify_url: erp.url, webhook_secret: SECRET, timeout_ms: 2_000 },
    });
    // Warm: the account count, the settings and the prepared statements are read once per process.
    await post(await paidNotification('WARM-1'));
    expect(await e.services.outbox.drain()).toBe(1);
    // The account count is kept only while the other instances' word reaches this one: on
    // PostgreSQL, once its LISTEN connection (opened by the first read of the count) is up.
    await waitUntil(() => e.services.store.signals.live);
    const body = await paidNotification('STMT-1');

    let answer: { result?: string } = {};
    const fresh = await statementsDuring(async () => {
      answer = await post(body);
    });
    expect(answer.result).toBe('applied');
    const duplicate = await statementsDuring(async () => {
      answer = await post(body);
    });
    expect(answer.result).toBe('duplicate');
    let delivered = 0;
    const delivery = await statementsDuring(async () => {
      delivered = await e.services.outbox.runOnce();
    });
    expect(delivered).toBe(1);
    expect(erp.accepted()).toHaveLength(2);

    const expected =
      kind === 'sqlite'
        ? {
            // the duplicate check; the link the order id could be a purchase on (an open-amount link's
            // bounds: one lookup per "-" in the id, at most 4; here one); begin, the transaction's
            // lookup, the notification, the change, the event, commit (a transaction's first member
            // runs without a savepoint)
            fresh: 8,
            // the duplicate check: the earlier notification with its transaction, one lookup
            duplicate: 1,
            // the claim (begin, update, commit); the result (begin, fenced update, attempt, commit)
            delivery: 7,
          }
        : {
            // the duplicate check; the link the order id could be a purchase on (as above) and the
            // transaction without a lock, in one statement; the notification with the change and
            // the event in one autocommit statement that locks the row while it is the version
            // read; the word to the other instances
            fresh: 4,
            duplicate: 1,
            // the claim; the result with its attempt (one statement)
            delivery: 2,
          };
    const seen = { fresh: short(fresh), duplicate: short(duplicate), delivery: short(delivery) };
    expect(seen, JSON.stringify(seen, null, 1)).toMatchObject({
      fresh: { length: expected.fresh },
      duplicate: { length: expected.duplicate },
      delivery: { length: expected.delivery },
    });
  });

  /**
   * The statements of a new order's creation at `url` and of the same request again, after one
   * creation to warm (the account count, the settings and the prepared statements are read once
   * per process).
   */
  async function creation(url: string, payload: (orderId: string) => Record<string, unknown>, tag: string) {
    const create = (orderId: string) =>
      e.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${KEY}` }, payload: payload(orderId) });
    expect((await create(`${tag}-WARM-1`)).statusCode).toBe(201);
    let status = 0;
    const fresh = await statementsDuring(async () => {
      status = (await create(`${tag}-STMT-1`)).statusCode;
    });
    expect(status).toBe(201);
    const again = await statementsDuring(async () => {
      status = (await create(`${tag}-STMT-1`)).statusCode;
    });
    expect(status).toBe(200);
    return { fresh, again };
  }

  function expectCounts(
    seen: { fresh: Awaited<ReturnType<typeof statementsDuring>>; again: Awaited<ReturnType<typeof statementsDuring>> },
    expected: { fresh: number; again: number },
  ): void {
    expect({ fresh: short(seen.fresh), again: short(seen.again) }).toMatchObject({
      fresh: { length: expected.fresh },
      again: { length: expected.again },
    });
  }

  it('a payment link created, and the same request again', async () => {
    const counts = await creation('/api/payment-links', (orderId) => ({ order_id: orderId, nominal: 150_000 }), 'LINK');

    const expected =
      kind === 'sqlite'
        ? {
            // the order id's lookup (another order id holding the same gateway id is found by the
            // insert's unique index, not by a lookup); begin, the insert, commit (the record before
            // the gateway call); begin, the gateway's answer written while the status is pending or
            // failed, commit
            fresh: 7,
            // the order id's lookup: the link the same request made
            again: 1,
          }
        : {
            // the order id's lookup; the insert; the gateway's answer (each an autocommit statement)
            fresh: 3,
            again: 1,
          };
    expectCounts(counts, expected);
  });

  it('a Core API charge created, and the same request again', async () => {
    const counts = await creation(
      '/api/charge',
      (orderId) => ({ order_id: orderId, nominal: 150_000, payment_type: 'qris' }),
      'CHARGE',
    );

    const expected =
      kind === 'sqlite'
        ? {
            // the order id's lookup (another order id holding the same gateway id is found by the
            // insert's unique index); begin, the insert, commit (the record before the gateway call);
            // begin, the gateway's answer, commit
            fresh: 7,
            // the order id's lookup: the charge the same request made
            again: 1,
          }
        : {
            // the order id's lookup; the insert; the gateway's answer
            fresh: 3,
            again: 1,
          };
    expectCounts(counts, expected);
  });
});
