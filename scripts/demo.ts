/**
 * `npm run demo`: the whole flow on one machine. Starts paylink with the embedded gateway simulator
 * and a small ERP receiver, creates a payment link through the real API, and prints what the ERP
 * receives once you pay on the hosted page. Ctrl-C stops everything and removes the temp data.
 *
 *   npm run demo               # open the printed URL, pick "BCA VA", press "Pay now"
 *   npm run demo -- --auto-pay # pays by itself (no browser) and exits after the ERP event
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { loadConfig } from '../src/config/env.js';
import { startService, type RunningService } from '../src/server.js';

export interface Receiver {
  url: string;
  events: Array<Record<string, unknown>>;
  onEvent(fn: (e: Record<string, unknown>) => void): void;
  close(): Promise<void>;
}

/**
 * The demo's ERP: verifies each delivery's signature with the shared secret (a Standard Webhooks
 * library, as an ERP would), refuses a wrong one with 401, and prints what it accepted.
 */
export async function startReceiver(secret: string, print: (line: string) => void = console.log): Promise<Receiver> {
  const events: Receiver['events'] = [];
  const listeners: Array<(e: Record<string, unknown>) => void> = [];
  const wh = new Webhook(secret);
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const id = String(req.headers['webhook-id'] ?? '(no id)');
      let event: Record<string, unknown>;
      try {
        const header = (name: string) => String(req.headers[name] ?? '');
        event = wh.verify(Buffer.concat(chunks).toString('utf8'), {
          'webhook-id': header('webhook-id'),
          'webhook-timestamp': header('webhook-timestamp'),
          'webhook-signature': header('webhook-signature'),
        }) as Record<string, unknown>;
      } catch (err) {
        print(`\n[ERP] refused ${id}: signature not verified (${err instanceof Error ? err.message : String(err)})`);
        res.writeHead(401).end();
        return;
      }
      events.push(event);
      print(`\n[ERP] received ${id}, signature verified:\n${JSON.stringify(event, null, 2)}`);
      for (const l of listeners) l(event);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/erp/payment-events`,
    events,
    onEvent: (fn) => listeners.push(fn),
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** What a person does on the hosted page: choose BCA VA, then "Pay now". */
async function payLikeABrowser(paymentUrl: string): Promise<void> {
  const chosen = await fetch(paymentUrl, {
    method: 'POST',
    body: new URLSearchParams({ method: 'bca_va' }),
    redirect: 'manual',
  });
  const instructions = chosen.headers.get('location');
  if (!instructions) throw new Error(`the payment page did not accept the method (HTTP ${chosen.status})`);
  const page = new URL(instructions, paymentUrl);
  const paid = await fetch(`${page.href}/pay`, { method: 'POST', redirect: 'manual' });
  if (paid.status >= 400) throw new Error(`paying failed (HTTP ${paid.status})`);
}

async function main(): Promise<void> {
  const autoPay = process.argv.includes('--auto-pay');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paylink-demo-'));
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  const receiver = await startReceiver(secret);
  const apiKey = `demo-${randomBytes(16).toString('hex')}`;
  const config = loadConfig({
    PORT: process.env.PORT ?? '0',
    HOST: '127.0.0.1',
    DATA_DIR: path.join(dir, 'data'),
    LOG_DIR: path.join(dir, 'logs'),
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
    MIDTRANS_MODE: 'simulator',
    API_KEYS: apiKey,
    ERP_NOTIFY_URL: receiver.url,
    ERP_WEBHOOK_SECRET: secret,
    log_user: 'operator',
    log_pass: randomBytes(12).toString('base64url'),
  });
  const state: { running?: RunningService; stopping: boolean } = { stopping: false };
  const stop = async (code: number) => {
    if (state.stopping) return;
    state.stopping = true;
    console.log('\nstopping…');
    await state.running?.stop().catch(() => undefined);
    await receiver.close();
    fs.rmSync(dir, { recursive: true, force: true });
    process.exit(code);
  };
  process.once('SIGINT', () => void stop(0));
  process.once('SIGTERM', () => void stop(0));

  const running = await startService(config, { stdoutLogs: false });
  state.running = running;
  const orderId = `DEMO/${new Date().toISOString().slice(0, 10)}:${randomBytes(3).toString('hex')}`;
  const res = await fetch(`${running.url}/api/payment-links`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      order_id: orderId,
      nominal: 150000,
      customer: { first_name: 'Budi', last_name: 'Demo', email: 'budi@example.com', phone: '08123456789' },
    }),
  });
  const link = (await res.json()) as Record<string, unknown>;
  if (res.status >= 300 || typeof link.payment_url !== 'string') {
    console.error(`could not create the payment link (HTTP ${res.status}):`, link);
    return stop(1);
  }
  console.log(`
paylink      ${running.url}   (docs: ${running.url}/docs — user "${config.operator.user}", password "${config.operator.pass}")
simulator    ${running.simulator?.baseUrl ?? '-'}
ERP receiver ${receiver.url}
logs         ${config.logDir}

Created payment link for order ${orderId} (Rp 150.000):

    ${link.payment_url}

${
  autoPay
    ? 'Paying it now the way a customer would on that page (BCA VA, then "Pay now"); the demo stops once the ERP receiver has the paid event.'
    : 'Open it in a browser, choose "BCA VA", then press "Pay now". The ERP receiver prints the event here.\nCtrl-C stops everything.'
}`);

  receiver.onEvent((e) => {
    if (autoPay && e.status === 'paid') void stop(0);
  });
  if (autoPay) {
    await payLikeABrowser(link.payment_url);
    setTimeout(() => {
      console.error('no paid event reached the ERP receiver within 30 s');
      void stop(1);
    }, 30_000).unref();
  }
}

const isEntry = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isEntry) {
  void main().catch((err: unknown) => {
    console.error(`demo failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
