/**
 * SIGTERM while a notification is being processed: the notification is answered 200 once its
 * confirmation and commit are done, and the process exits 0 right after, not at the 15 s forced
 * exit. The gateway (the simulator, its status API slowed) is the sender's keep-alive peer as
 * Midtrans is: the connection the notification came on is busy when the close begins.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { DATABASE_KINDS, TEST_DATABASE_URL, tempDir } from '../helpers/stores.js';
import { signedNotification } from '../helpers/notifications.js';
import { startServiceProcess, stopServiceProcess, type ServiceProcess } from '../helpers/child.js';
import { startSimulator, type RunningSimulator } from '../../simulator/index.js';

const OP = { user: 'ops', pass: 'shutdown-test-operator-pass' };
const LATENCY_MS = 1_500;
const SERVER_KEY = 'SB-Mid-server-shutdown-test-0123456789';

async function call(url: string, method: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(url, {
    method,
    headers: {
      'content-type': 'application/json',
      authorization: `Basic ${Buffer.from(`${SERVER_KEY}:`).toString('base64')}`,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  expect(res.status).toBeLessThan(300);
  return (await res.json()) as Record<string, unknown>;
}

describe.each(DATABASE_KINDS)('SIGTERM during a notification (%s)', (kind) => {
  let dir = '';
  let pgName: string | undefined;
  let dbEnv: Record<string, string> = {};
  let sim: RunningSimulator;
  let child: ServiceProcess | undefined;

  beforeEach(async () => {
    dir = tempDir('paylink-shutdown-');
    sim = await startSimulator({ serverKey: SERVER_KEY, logger: false });
    if (kind === 'postgres' && TEST_DATABASE_URL) {
      pgName = `shutdown_${randomBytes(5).toString('hex')}`;
      const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await admin.connect();
      await admin.query(`create database ${pgName}`);
      await admin.end();
      const u = new URL(TEST_DATABASE_URL);
      u.pathname = `/${pgName}`;
      dbEnv = { DATABASE_URL: u.toString() };
    } else dbEnv = {};
  });
  afterEach(async () => {
    if (child) await stopServiceProcess(child, 'SIGKILL');
    child = undefined;
    await sim.close();
    fs.rmSync(dir, { recursive: true, force: true });
    if (pgName && TEST_DATABASE_URL) {
      const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await admin.connect();
      await admin.query(`drop database if exists ${pgName} with (force)`);
      await admin.end();
      pgName = undefined;
    }
  });

  it('answers the notification, then exits 0 well before the forced exit', async () => {
    const orderId = `SHUT-${randomBytes(3).toString('hex')}`;
    const charged = await call(`${sim.baseUrl}/v2/charge`, 'POST', {
      payment_type: 'bank_transfer',
      transaction_details: { order_id: orderId, gross_amount: 150_000 },
      bank_transfer: { bank: 'bca' },
    });
    const transactionId = String(charged.transaction_id);
    await call(`${sim.baseUrl}/_sim/transactions/${transactionId}/pay`, 'POST', {});
    await call(`${sim.baseUrl}/_sim/faults`, 'PUT', { latency_ms: LATENCY_MS });
    child = await startServiceProcess({
      ...dbEnv,
      DATA_DIR: dir,
      LOG_DIR: path.join(dir, 'logs'),
      MIDTRANS_MODE: 'sandbox',
      MIDTRANS_SERVER_KEY: SERVER_KEY,
      MIDTRANS_API_BASE_URL: sim.baseUrl,
      MIDTRANS_APP_BASE_URL: sim.baseUrl,
      log_user: OP.user,
      log_pass: OP.pass,
    });
    const answered = fetch(`${child.url}/webhook/midtrans`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(
        signedNotification(
          {
            order_id: orderId,
            transaction_status: 'settlement',
            transaction_id: transactionId,
            gross_amount: '150000.00',
          },
          SERVER_KEY,
        ),
      ),
    }).then((r) => r.status);
    // The confirmation is waiting on the slowed status API when the signal comes.
    await new Promise((r) => setTimeout(r, 300));
    const t0 = Date.now();
    const stopped = await stopServiceProcess(child, 'SIGTERM');
    const took = Date.now() - t0;
    expect(await answered).toBe(200);
    expect(stopped).toEqual({ code: 0, signal: null });
    // The confirmation's remaining wait plus the close; the forced exit would be 15 s.
    expect(took).toBeLessThan(LATENCY_MS + 5_000);
    expect(child.output()).toContain('shutdown finished');
  }, 40_000);
});
