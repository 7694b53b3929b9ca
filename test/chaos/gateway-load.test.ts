/**
 * The chaos scenarios count on their gateway load making exactly the orders it was asked for:
 * lanes waiting out a service restart near the end must not take order numbers past the last.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../simulator/index.js';
import { startGatewayLoad, type GatewayLoad } from './gateway-load.js';
import { seededRandom, waitUntil } from './support.js';

const SERVER_KEY = 'SB-Mid-server-chaos-load-key';

async function simList<T>(sim: RunningSimulator, what: 'transactions' | 'notifications'): Promise<T[]> {
  const res = await fetch(`${sim.baseUrl}/_sim/${what}`);
  const body = (await res.json()) as Record<string, T[] | undefined>;
  return body[what] ?? [];
}

describe('the chaos gateway load', () => {
  let sim: RunningSimulator | undefined;
  afterEach(async () => {
    await sim?.close();
    sim = undefined;
  });

  it('makes exactly its orders when the service goes down during the last ones (every lane then waits)', async () => {
    const ORDERS = 12;
    sim = await startSimulator({ serverKey: SERVER_KEY, seed: 1, logger: false });
    const running = sim;
    let up = true;
    let wentDown = false;
    const taking: { load?: GatewayLoad } = {};
    // Down as soon as a lane asks with two orders left: the other lanes finish the order they are
    // on and then wait as well; the service comes back once every order taken is paid.
    const isUp = () => {
      if (up && !wentDown && taking.load !== undefined && taking.load.sent() >= ORDERS - 2) {
        wentDown = true;
        up = false;
      }
      return up;
    };
    const taken = startGatewayLoad({
      simBaseUrl: running.baseUrl,
      serverKey: SERVER_KEY,
      orders: ORDERS,
      prefix: 'LOAD',
      random: seededRandom(7),
      isUp,
    });
    taking.load = taken;
    await waitUntil('the service down with two orders left', 30_000, () => wentDown, 5);
    await waitUntil(
      'every order taken so far paid at the gateway',
      30_000,
      async () => {
        const txns = await simList<{ order_id: string; transaction_status: string }>(running, 'transactions');
        return txns.length === taken.sent() && txns.every((t) => t.transaction_status === 'settlement');
      },
      20,
    );
    up = true;
    await taken.finished;

    const orders = (await simList<{ order_id: string }>(running, 'transactions')).map((t) => t.order_id).sort();
    const notified = (await simList<{ order_id: string; transaction_status: string }>(running, 'notifications'))
      .map((n) => `${n.order_id} ${n.transaction_status}`)
      .sort();
    const expected = Array.from({ length: ORDERS }, (_, i) => `LOAD-${i}`).sort();
    expect(taken.errors).toEqual([]);
    expect(notified).toEqual(expected.flatMap((o) => [`${o} pending`, `${o} settlement`]).sort());
    expect(orders).toEqual(expected);
    expect(taken.sent()).toBe(ORDERS);
  });
});
