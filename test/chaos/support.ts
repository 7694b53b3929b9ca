/**
 * Shared by the chaos scenarios: seeded randomness, a database per scenario (a temp SQLite file,
 * or a PostgreSQL database of its own, since service processes cannot be handed a schema), the
 * parseable figures line, and condition-based waiting (never a timing assertion).
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { TEST_DATABASE_URL, tempDir } from '../helpers/stores.js';
import type { DatabaseConfig } from '../../src/config/env.js';

export const OP = { user: 'ops', pass: 'chaos-operator-pass-7f3a9c' };
export const OP_AUTH = { authorization: `Basic ${Buffer.from(`${OP.user}:${OP.pass}`).toString('base64')}` };

/** `CHAOS_SEED` replays a run; the default keeps CI deterministic in what it tries. */
export const SEED = Number(process.env.CHAOS_SEED ?? 20261123);
/** `CHAOS_SCALE=0.2` for a quick local run; CI uses the defaults (the issue's figures). */
export const SCALE = Math.max(0.05, Number(process.env.CHAOS_SCALE ?? 1));
export const scaled = (n: number, min = 1): number => Math.max(min, Math.round(n * SCALE));

export { seededRandom } from '../helpers/random.js';

export type Figures = Record<string, number | string | boolean>;

/** One line per scenario and database: `CHAOS-FIGURES {"scenario":…,"db":…,…}`. */
export function reportFigures(scenario: string, db: string, figures: Figures): void {
  const line = `CHAOS-FIGURES ${JSON.stringify({ scenario, db, seed: SEED, ...figures })}`;
  console.log(line);
  if (process.env.CHAOS_FIGURES_FILE) fs.appendFileSync(process.env.CHAOS_FIGURES_FILE, `${line}\n`);
}

export async function waitUntil(
  what: string,
  timeoutMs: number,
  check: () => Promise<boolean> | boolean,
  everyMs = 200,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export interface ChaosDatabase {
  kind: 'sqlite' | 'postgres';
  dir: string;
  /** DATABASE_URL for the service process (empty for SQLite: DATA_DIR decides). */
  env: Record<string, string>;
  config: DatabaseConfig;
  dispose(): Promise<void>;
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

export async function chaosDatabase(kind: 'sqlite' | 'postgres'): Promise<ChaosDatabase> {
  const dir = tempDir('paylink-chaos-');
  if (kind === 'sqlite') {
    return {
      kind,
      dir,
      env: {},
      config: { kind: 'sqlite', path: path.join(dir, 'paylink.db') },
      dispose: async () => fs.rmSync(dir, { recursive: true, force: true }),
    };
  }
  if (!TEST_DATABASE_URL) throw new Error('TEST_DATABASE_URL is not set');
  const name = `chaos_${randomBytes(5).toString('hex')}`;
  await admin((c) => c.query(`create database ${name}`));
  const u = new URL(TEST_DATABASE_URL);
  u.pathname = `/${name}`;
  return {
    kind,
    dir,
    env: { DATABASE_URL: u.toString() },
    config: { kind: 'postgres', url: u.toString() },
    async dispose() {
      await admin((c) => c.query(`drop database if exists ${name} with (force)`));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function getJson(
  url: string,
  headers: Record<string, string> = OP_AUTH,
): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, { headers });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body };
}

export async function postJson(url: string, body: unknown, headers: Record<string, string> = OP_AUTH): Promise<number> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  await res.arrayBuffer();
  return res.status;
}

export const CHAOS_SERVER_KEY = 'SB-Mid-server-chaos-key-5d1e';

/**
 * Environment for a service process in a real gateway mode (status confirmation on) whose gateway
 * is the simulator running in the test process, so it outlives every service process.
 */
export function gatewayEnv(simBaseUrl: string): Record<string, string> {
  return {
    MIDTRANS_MODE: 'sandbox',
    MIDTRANS_SERVER_KEY: CHAOS_SERVER_KEY,
    MIDTRANS_API_BASE_URL: simBaseUrl,
    MIDTRANS_APP_BASE_URL: simBaseUrl,
  };
}

const gatewayAuth = () => `Basic ${Buffer.from(`${CHAOS_SERVER_KEY}:`).toString('base64')}`;

/** A Core API bank-transfer charge at the simulator, then paid: a settled transaction the status API knows. */
export async function paidOrder(simBaseUrl: string, orderId: string, amount: number): Promise<void> {
  const charge = await fetch(`${simBaseUrl}/v2/charge`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', authorization: gatewayAuth() },
    body: JSON.stringify({
      payment_type: 'bank_transfer',
      transaction_details: { order_id: orderId, gross_amount: amount },
      bank_transfer: { bank: 'bca' },
    }),
  });
  await charge.arrayBuffer();
  if (charge.status !== 200 && charge.status !== 201) throw new Error(`charge ${orderId}: ${charge.status}`);
  const pay = await fetch(`${simBaseUrl}/_sim/transactions/${encodeURIComponent(orderId)}/pay`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  await pay.arrayBuffer();
  if (pay.status !== 200) throw new Error(`pay ${orderId}: ${pay.status}`);
}

/** The gateway's status body for the order: signed like a notification, so it is one. */
export async function notificationFor(simBaseUrl: string, orderId: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${simBaseUrl}/v2/${encodeURIComponent(orderId)}/status`, {
    headers: { accept: 'application/json', authorization: gatewayAuth() },
  });
  const body = (await res.json()) as Record<string, unknown>;
  if (res.status !== 200 || typeof body.signature_key !== 'string') throw new Error(`status ${orderId}: ${res.status}`);
  return body;
}

export async function postNotification(serviceUrl: string, body: Record<string, unknown>): Promise<number> {
  try {
    const res = await fetch(`${serviceUrl}/webhook/midtrans`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'Veritrans' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

/** How long a service process may take to start on this loaded machine (tsx compiles at start). */
export const START_MS = 90_000;

/** Resolves once the service lists no ERP event still pending or failed. */
export async function untilAllDelivered(serviceUrl: string, timeoutMs: number): Promise<void> {
  await waitUntil(
    'every outbox event recorded as delivered',
    timeoutMs,
    async () => {
      for (const status of ['pending', 'failed']) {
        const { status: code, body } = await getJson(`${serviceUrl}/api/deliveries?limit=10&status=${status}`);
        if (code !== 200 || (body as { items?: unknown[] }).items?.length !== 0) return false;
      }
      return true;
    },
    500,
  );
}
