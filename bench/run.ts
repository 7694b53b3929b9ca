/**
 * `npm run bench`: throughput of paylink's hot paths over loopback HTTP, each reported as a ratio
 * against a baseline (`GET /health`) measured in the same run on the same machine, so the figures
 * compare across machines and across changes. Loopback only; it stops by itself.
 *
 *   npm run bench                         # SQLite
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench   # SQLite, then PostgreSQL
 *   BENCH_SCALE=0.2 npm run bench         # fewer requests (a quick look)
 *
 * What is measured, for each database:
 *   health      GET /health (baseline: routing, auth hook, logging, no database)
 *   webhook     POST /webhook/midtrans, signed, a new order each (verify, record, status, outbox write)
 *   duplicate   the same notifications again (verify, dedupe, no change)
 *   link        POST /api/payment-links through the embedded simulator (one gateway call each)
 *   delivery    outbox events delivered to a loopback ERP receiver (signed, in order per order)
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { Pool } from 'undici';
import { loadConfig, type Config } from '../src/config.js';
import { createLogger, closeLogger } from '../src/logging/logger.js';
import { openStore } from '../src/storage/kysely-store.js';
import { createServices } from '../src/services.js';
import { buildApp } from '../src/app.js';
import { midtransSignature } from '../src/gateway/signature.js';
import { startSimulator } from '../simulator/index.js';

const SCALE = Math.max(0.05, Math.min(10, Number(process.env.BENCH_SCALE ?? '1') || 1));
const CONCURRENCY = 16;
const SERVER_KEY = 'SB-Mid-server-bench-key';
const API_KEY = `bench-${randomBytes(8).toString('hex')}`;
const n = (base: number) => Math.max(20, Math.round(base * SCALE));

interface Result {
  name: string;
  count: number;
  seconds: number;
  perSecond: number;
  p50ms: number;
  p99ms: number;
  failures: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/** Runs `count` requests, `CONCURRENCY` at a time; a request "fails" when its status is not expected. */
async function measure(name: string, count: number, send: (i: number) => Promise<number>, ok: (status: number) => boolean): Promise<Result> {
  const latencies: number[] = [];
  let failures = 0;
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < count; i = next++) {
        const t0 = process.hrtime.bigint();
        const status = await send(i).catch(() => 0);
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
        if (!ok(status)) failures++;
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  latencies.sort((a, b) => a - b);
  return { name, count, seconds, perSecond: count / seconds, p50ms: percentile(latencies, 50), p99ms: percentile(latencies, 99), failures };
}

interface Receiver {
  url: string;
  received(): number;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  let count = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      count++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/erp`,
    received: () => count,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

async function benchDatabase(kind: 'sqlite' | 'postgres', url?: string): Promise<Result[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paylink-bench-'));
  const operator = { user: 'bench', pass: randomBytes(12).toString('hex') };
  const schema = kind === 'postgres' ? `bench_${randomBytes(4).toString('hex')}` : undefined;
  const receiver = await startReceiver();
  const simulator = await startSimulator({ serverKey: SERVER_KEY, logger: false });
  const base = loadConfig({
    PORT: '0',
    DATA_DIR: path.join(dir, 'data'),
    LOG_DIR: path.join(dir, 'logs'),
    LOG_LEVEL: 'info',
    MIDTRANS_MODE: 'simulator',
    MIDTRANS_SERVER_KEY: SERVER_KEY,
    API_KEYS: API_KEY,
    ERP_NOTIFY_URL: receiver.url,
    ERP_WEBHOOK_SECRET: `whsec_${randomBytes(24).toString('base64')}`,
    log_user: operator.user,
    log_pass: operator.pass,
  });
  const config: Config = { ...base, database: kind === 'postgres' && url ? { kind: 'postgres', url } : base.database };
  fs.mkdirSync(config.dataDir, { recursive: true });
  // The real file logger: writing and scrubbing log lines is part of the cost of a request.
  const logger = await createLogger({ level: 'info', logDir: config.logDir, stdout: false, secrets: [SERVER_KEY, API_KEY, config.erp.webhookSecret, operator.pass] });
  const store = await openStore(config.database, { logger, schema });
  const services = createServices(config, { logger, store, operator }, { simulatorBaseUrl: simulator.baseUrl });
  const app = await buildApp(services);
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  simulator.setNotificationUrl(`${address}/webhook/midtrans`);
  for (const w of services.workers) w.start();
  const pool = new Pool(address, { connections: CONCURRENCY, headersTimeout: 30_000, bodyTimeout: 30_000 });
  const request = async (method: 'GET' | 'POST', p: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await pool.request({ method, path: p, headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
    await res.body.dump();
    return res.statusCode;
  };
  const results: Result[] = [];
  try {
    // Warm-up: JIT, connection pool, prepared statements.
    for (let i = 0; i < 200; i++) await request('GET', '/health');

    const healthCount = n(4000);
    results.push(await measure('health', healthCount, () => request('GET', '/health'), (s) => s === 200));

    const run = randomBytes(3).toString('hex');
    const webhookCount = n(1500);
    const notifications = Array.from({ length: webhookCount }, (_, i) => {
      const orderId = `BENCH-${run}-${i}`;
      const gross = `${10_000 + i}.00`;
      return {
        transaction_time: '2026-11-22 10:00:00',
        transaction_status: 'settlement',
        settlement_time: '2026-11-22 10:01:00',
        transaction_id: randomUUID(),
        status_message: 'midtrans payment notification',
        status_code: '200',
        signature_key: midtransSignature(orderId, '200', gross, SERVER_KEY),
        payment_type: 'bank_transfer',
        order_id: orderId,
        merchant_id: 'G000000000',
        gross_amount: gross,
        fraud_status: 'accept',
        currency: 'IDR',
        va_numbers: [{ bank: 'bca', va_number: '12345678901' }],
      };
    });
    const deliveredBefore = receiver.received();
    const deliveryStart = process.hrtime.bigint();
    results.push(await measure('webhook', webhookCount, (i) => request('POST', '/webhook/midtrans', notifications[i]), (s) => s === 200));
    results.push(await measure('duplicate', webhookCount, (i) => request('POST', '/webhook/midtrans', notifications[i]), (s) => s === 200));

    // Delivery: every event written above reaches the receiver (the worker ran all along).
    const deadline = Date.now() + 120_000;
    while (receiver.received() - deliveredBefore < webhookCount && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const delivered = receiver.received() - deliveredBefore;
    const deliverySeconds = Number(process.hrtime.bigint() - deliveryStart) / 1e9;
    results.push({ name: 'delivery', count: delivered, seconds: deliverySeconds, perSecond: delivered / deliverySeconds, p50ms: 0, p99ms: 0, failures: webhookCount - delivered });

    const linkCount = n(400);
    results.push(
      await measure(
        'link',
        linkCount,
        (i) => request('POST', '/api/payment-links', { order_id: `LINK-${run}/${i}:1`, nominal: 150_000 + i }, { authorization: `Bearer ${API_KEY}` }),
        (s) => s === 200 || s === 201,
      ),
    );
  } finally {
    await pool.close();
    await app.close();
    await services.close();
    await simulator.close();
    await receiver.close();
    await closeLogger(logger);
    if (schema && url) {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      await c.query(`drop schema if exists ${schema} cascade`).finally(() => c.end());
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return results;
}

function report(kind: string, results: Result[]): void {
  const baseline = results.find((r) => r.name === 'health');
  console.log(`\n${kind}  (concurrency ${CONCURRENCY}, ${os.cpus().length} CPUs, node ${process.version})`);
  console.log('  scenario     count   req/s    × health   p50 ms   p99 ms   failures');
  for (const r of results) {
    const ratio = baseline ? r.perSecond / baseline.perSecond : 0;
    console.log(
      `  ${r.name.padEnd(10)} ${String(r.count).padStart(6)} ${r.perSecond.toFixed(0).padStart(7)}   ${ratio.toFixed(3).padStart(7)}   ${r.p50ms.toFixed(2).padStart(6)}   ${r.p99ms.toFixed(2).padStart(6)}   ${String(r.failures).padStart(8)}`,
    );
  }
}

async function main(): Promise<void> {
  const all: Record<string, Result[]> = {};
  all.sqlite = await benchDatabase('sqlite');
  report('SQLite', all.sqlite);
  const url = process.env.BENCH_DATABASE_URL;
  if (url) {
    all.postgres = await benchDatabase('postgres', url);
    report('PostgreSQL', all.postgres);
  }
  const failures = Object.values(all).flat().reduce((s, r) => s + r.failures, 0);
  if (process.env.BENCH_JSON) fs.writeFileSync(process.env.BENCH_JSON, JSON.stringify(all, null, 2));
  if (failures > 0) {
    console.error(`\n${failures} request(s) or deliveries failed: the figures above are not comparable.`);
    process.exit(1);
  }
}

void main().catch((err: unknown) => {
  console.error(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exit(1);
});
