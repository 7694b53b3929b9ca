/**
 * The pull loop of the ERP integration guide (examples/erp-puller.mjs, shown verbatim there) against
 * a running paylink: it handles every event once, keeps its cursor, and acknowledges what it handled.
 */
import fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startE2E, type E2EContext } from '../helpers/e2e.js';
import { pullPaylinkEvents } from '../../examples/erp-puller.mjs';

const KEY = 'erp-key-puller-example-0123';

describe("the guide's pull loop", () => {
  let e: E2EContext;
  beforeEach(async () => {
    e = await startE2E('sqlite', { listen: true, env: { API_KEYS: KEY } });
  });
  afterEach(async () => e.close());

  it('receives each event once, saves the cursor and acknowledges, then goes on from the saved cursor', async () => {
    const pay = async (orderId: string) => {
      const res = await fetch(`${e.url}/api/charge`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ order_id: orderId, nominal: 20_000, payment_type: 'qris' }),
      });
      const { gateway_order_id } = (await res.json()) as { gateway_order_id: string };
      await e.sim.post(`/_sim/transactions/${gateway_order_id}/pay`);
    };
    await pay('PULL-EX-1');
    await pay('PULL-EX-2');
    const handled: Array<{ event_id: string; order_id: string; status: string }> = [];
    let saved: string | undefined;
    const run = (stopAt: number) => {
      const stop = new AbortController();
      const done = pullPaylinkEvents({
        baseUrl: e.url ?? '',
        apiKey: KEY,
        loadCursor: async () => saved,
        saveCursor: async (c: string) => {
          saved = c;
        },
        handle: async (ev) => {
          handled.push(ev);
          if (handled.length >= stopAt) setTimeout(() => stop.abort(), 50);
        },
        signal: stop.signal,
      });
      return done;
    };
    await run(2);
    expect(handled.map((h) => [h.order_id, h.status])).toEqual([
      ['PULL-EX-1', 'paid'],
      ['PULL-EX-2', 'paid'],
    ]);
    await expect.poll(async () => (await e.services.store.outbox.countByState()).delivered).toBe(2);
    await pay('PULL-EX-3');
    await run(3);
    expect(handled.map((h) => h.order_id)).toEqual(['PULL-EX-1', 'PULL-EX-2', 'PULL-EX-3']);
    expect(new Set(handled.map((h) => h.event_id)).size).toBe(3);
    await expect.poll(async () => (await e.services.store.outbox.countByState()).delivered).toBe(3);
  });

  it('the guide shows the example file as it is', () => {
    expect(fs.readFileSync('docs/erp-integration.md', 'utf8')).toContain(
      fs.readFileSync('examples/erp-puller.mjs', 'utf8').trim(),
    );
  });
});
