/**
 * The gateway's side of a chaos scenario: `orders` orders (`<prefix>-0` … `<prefix>-<orders-1>`),
 * each charged at the simulator as a BCA virtual account and then paid there, so the simulator
 * notifies `pending` and then `settlement` for each. Several lanes run at once; they pause while
 * the service is down, so the gateway's first attempts mostly find it up.
 */
import { sleep } from './support.js';

export interface GatewayLoadOptions {
  simBaseUrl: string;
  serverKey: string;
  orders: number;
  prefix: string;
  random: () => number;
  isUp: () => boolean;
  lanes?: number;
}

export interface GatewayLoad {
  done(): boolean;
  /** Orders taken by a lane so far. */
  sent(): number;
  errors: string[];
  finished: Promise<unknown>;
}

async function gatewayPost(o: GatewayLoadOptions, p: string, body: unknown, auth = true): Promise<number> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (auth) headers.authorization = `Basic ${Buffer.from(`${o.serverKey}:`).toString('base64')}`;
  const res = await fetch(`${o.simBaseUrl}${p}`, {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  await res.arrayBuffer();
  return res.status;
}

export function startGatewayLoad(o: GatewayLoadOptions): GatewayLoad {
  let next = 0;
  let done = false;
  const errors: string[] = [];
  const lane = async () => {
    for (;;) {
      while (!o.isUp()) await sleep(20);
      // Whether an order is left is decided after the wait, never before it: the other lanes may
      // have taken the last ones while this one waited.
      if (next >= o.orders) return;
      const i = next++;
      const orderId = `${o.prefix}-${i}`;
      const charged = await gatewayPost(o, '/v2/charge', {
        payment_type: 'bank_transfer',
        transaction_details: { order_id: orderId, gross_amount: 10_000 + i },
        bank_transfer: { bank: 'bca' },
      });
      if (charged !== 200 && charged !== 201) errors.push(`${orderId} charge ${charged}`);
      await sleep(o.random() * 60);
      const paid = await gatewayPost(o, `/_sim/transactions/${orderId}/pay`, {}, false);
      if (paid !== 200) errors.push(`${orderId} pay ${paid}`);
    }
  };
  const finished = Promise.all(Array.from({ length: o.lanes ?? 4 }, lane)).finally(() => (done = true));
  return { done: () => done, sent: () => next, errors, finished };
}
