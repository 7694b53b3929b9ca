/**
 * The burst scenario: account A's notifications at a steady rate, then a burst, then steady again,
 * while account B's come at a steady rate throughout; each account's ERP is a loopback receiver
 * answering in `erpDelayMs`. Two variants: A's ERP up throughout, and A's ERP answering 503 for
 * the burst's first `downS` seconds. Through the built service over HTTP, confirmed against the
 * simulator's process as in production.
 */
import { randomBytes } from 'node:crypto';
import { runLoad, bodiesFile, epochMs, startReceiver, waitFor, type Receiver, type Running } from './procs.js';
import {
  OP_AUTH,
  SERVER_KEY,
  launch,
  notification,
  orders,
  pct,
  settleAtGateway,
  type Figures,
  type Options,
} from './scenarios.js';
import { freshDatabase, seedOrders, type BenchDatabase, type KnownOrder } from './seed.js';
import type { LoadResult } from './load.js';

export interface BurstOptions {
  /** Seconds of steady rate before the burst, of burst, and of steady rate after it. */
  steadyS: number;
  burstS: number;
  tailS: number;
  /** Seconds A's ERP answers 503 from the burst's start (the second variant). */
  downS: number;
  /** Notifications per second: steady (each account) and A's burst. */
  rate: number;
  burstRate: number;
  erpDelayMs: number;
}

const B = 'shop-b';

const progress = (line: string) => process.stderr.write(`${line}\n`);

async function operator(url: string, path: string, body: unknown): Promise<void> {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: OP_AUTH, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
}

/** Notifications for `known` sent at `rate` to `path`; their send times by index. */
async function send(
  svc: Running,
  path: string,
  known: KnownOrder[],
  ids: Map<string, string>,
  rate: number,
  dir: string,
): Promise<LoadResult> {
  const file = bodiesFile(
    dir,
    `burst-${randomBytes(3).toString('hex')}`,
    known.map((k) => notification(k.orderId, k.nominal, ids.get(k.orderId))),
  );
  return runLoad({
    url: svc.url,
    method: 'POST',
    path,
    bodiesFile: file,
    connections: pacedConnections(rate),
    amount: known.length,
    overallRate: rate,
    sendTimes: true,
  });
}

/**
 * autocannon paces each connection at a whole number of requests a second (its share of the rate,
 * rounded), so the connections must divide the rate: 200 connections for 300/s sent 2/s on half of
 * them and 1/s on the other half, 300/s for the first half of the burst and 100/s for the rest. The
 * most connections up to 200 that divide it (150 at 2/s for 300/s): enough that the rate holds
 * while answers take up to half a second.
 */
export function pacedConnections(rate: number): number {
  for (let c = Math.min(200, rate); c > 1; c--) if (rate % c === 0) return c;
  return 1;
}

/** Lag (send → the ERP's receipt) of each of `known`, by send time; Infinity when never received. */
function lags(known: KnownOrder[], r: LoadResult, rx: Receiver): { sent: number; lag: number; at: number }[] {
  return known.map((k, i) => {
    const sent = r.sendTimes?.[i] ?? 0;
    const at = rx.arrivals.get(k.orderId) ?? Number.POSITIVE_INFINITY;
    return { sent, lag: at - sent, at };
  });
}

async function variant(
  svc: Running,
  sim: string,
  db: BenchDatabase,
  o: Options,
  b: BurstOptions,
  rxB: Receiver,
  name: 'up' | 'down',
): Promise<Figures> {
  let burstStart = Number.POSITIVE_INFINITY;
  const rxA = await startReceiver({
    delayMs: b.erpDelayMs,
    down: () => name === 'down' && epochMs() >= burstStart && epochMs() < burstStart + b.downS * 1000,
  });
  try {
    await operator(svc.url, '/api/config', { erp: { notify_url: rxA.url } });
    const tag = `${name}${randomBytes(3).toString('hex')}`;
    const pre = orders(`P${tag}`, b.rate * b.steadyS);
    const burst = orders(`U${tag}`, b.burstRate * b.burstS);
    const tail = orders(`T${tag}`, b.rate * b.tailS);
    const onB = orders(`B${tag}`, b.rate * (b.steadyS + b.burstS + b.tailS));
    await seedOrders(db.config, [...pre, ...burst, ...tail]);
    await seedOrders(db.config, onB, B);
    const ids = await settleAtGateway(sim, [...pre, ...burst, ...tail, ...onB]);
    progress(`burst (${name}): ${pre.length + burst.length + tail.length} + ${onB.length} orders seeded and settled`);
    const c0 = svc.cpuMs();
    const bRun = send(svc, `/webhook/midtrans/${B}`, onB, ids, b.rate, o.tmp);
    const rPre = await send(svc, '/webhook/midtrans', pre, ids, b.rate, o.tmp);
    burstStart = epochMs();
    const rBurst = await send(svc, '/webhook/midtrans', burst, ids, b.burstRate, o.tmp);
    const burstEnd = (rBurst.sendTimes ?? []).reduce((m, t) => Math.max(m, t), burstStart);
    const rTail = await send(svc, '/webhook/midtrans', tail, ids, b.rate, o.tmp);
    const rB = await bRun;
    progress(`burst (${name}): sent; waiting for the ERPs`);
    const all = [...pre, ...burst, ...tail];
    await waitFor(() => all.every((k) => rxA.arrivals.has(k.orderId)), 300_000);
    await waitFor(() => onB.every((k) => rxB.arrivals.has(k.orderId)), 60_000);
    const cpuUs = ((svc.cpuMs() - c0) * 1000) / (all.length + onB.length);
    const a = [...lags(pre, rPre, rxA), ...lags(burst, rBurst, rxA), ...lags(tail, rTail, rxA)];
    const during = lags(burst, rBurst, rxA)
      .map((x) => x.lag)
      .sort((x, y) => x - y);
    // Back under 1 s: the receipt of the last event whose lag was 1 s or more.
    const slow = a.filter((x) => x.lag >= 1000 && x.sent >= burstStart).map((x) => x.at);
    const recovery = slow.reduce((m, at) => Math.max(m, at - burstEnd), 0);
    const bLags = lags(onB, rB, rxB);
    const bWithout = bLags
      .filter((x) => x.sent < burstStart)
      .map((x) => x.lag)
      .sort((x, y) => x - y);
    const bWith = bLags
      .filter((x) => x.sent >= burstStart && x.sent <= burstEnd)
      .map((x) => x.lag)
      .sort((x, y) => x - y);
    const lost = [...a, ...bLags].filter((x) => !Number.isFinite(x.lag)).length;
    const twice = [...rxA.accepted.values(), ...rxB.accepted.values()].reduce((s, n) => s + Math.max(0, n - 1), 0);
    const codes: Record<string, number> = {};
    for (const r of [rPre, rBurst, rTail, rB])
      for (const [code, count] of Object.entries(r.statusCodes))
        if (!code.startsWith('2')) codes[code] = (codes[code] ?? 0) + count;
    const p = `burst_${name}_`;
    return {
      [`${p}rate`]: rBurst.perSecond,
      [`${p}lost`]: lost,
      [`${p}twice`]: twice,
      [`${p}non2xx`]: rPre.failures + rBurst.failures + rTail.failures + rB.failures,
      // Non-2xx answers by status; failures without one are transport errors or autocannon's 30 s timeout.
      [`${p}non2xx_codes`]: JSON.stringify(codes),
      [`${p}webhook_p50_ms`]: rBurst.p50ms,
      [`${p}webhook_p99_ms`]: rBurst.p99ms,
      [`${p}lag_p99_ms`]: pct(during, 99),
      [`${p}recovery_ms`]: recovery,
      [`${p}b_without_p50_ms`]: pct(bWithout, 50),
      [`${p}b_without_p99_ms`]: pct(bWithout, 99),
      [`${p}b_with_p50_ms`]: pct(bWith, 50),
      [`${p}b_with_p99_ms`]: pct(bWith, 99),
      [`${p}cpu_us`]: cpuUs,
    };
  } finally {
    await rxA.close();
  }
}

export async function benchBurst(
  kind: 'sqlite' | 'postgres',
  o: Options,
  b: BurstOptions,
  adminUrl?: string,
): Promise<Figures> {
  const db = await freshDatabase(kind, o.tmp, adminUrl);
  const rxB = await startReceiver({ delayMs: b.erpDelayMs });
  try {
    const l = await launch(db, o.tmp);
    try {
      await operator(l.svc.url, '/api/accounts', {
        id: B,
        config: {
          gateway: {
            mode: 'sandbox',
            server_key: SERVER_KEY,
            api_base_url: l.sim,
            app_base_url: l.sim,
            merchant_id: 'G000000000',
          },
          erp: { notify_url: rxB.url, webhook_secret: `whsec_${randomBytes(24).toString('base64')}` },
        },
      });
      const f: Figures = {
        burst_rate_steady: b.rate,
        burst_rate_burst: b.burstRate,
        burst_seconds: b.burstS,
        burst_down_seconds: b.downS,
      };
      Object.assign(f, await variant(l.svc, l.sim, db, o, b, rxB, 'up'));
      Object.assign(f, await variant(l.svc, l.sim, db, o, b, rxB, 'down'));
      f.burst_peak_rss_mb = l.svc.peakRssMb();
      return f;
    } finally {
      await l.stop();
    }
  } finally {
    await rxB.close();
    await db.drop();
  }
}
