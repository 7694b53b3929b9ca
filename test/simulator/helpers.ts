import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '../../simulator/index.js';

export const KEY = 'SB-Mid-server-test-key';
export type J = Record<string, unknown>;

export function basic(key = KEY): string {
  return `Basic ${Buffer.from(`${key}:`).toString('base64')}`;
}

export function start(opts: Partial<SimulatorOptions> = {}): Promise<RunningSimulator> {
  return startSimulator({ serverKey: KEY, seed: 42, ...opts });
}

export interface Res {
  status: number;
  body: J;
  text: string;
  headers: Headers;
}

export interface CallOptions {
  body?: unknown;
  raw?: string;
  headers?: Record<string, string>;
  auth?: string | false;
}

export async function call(base: string, method: string, path: string, o: CallOptions = {}): Promise<Res> {
  const headers: Record<string, string> = { accept: 'application/json', ...o.headers };
  if (o.auth !== false) headers.authorization = o.auth ?? basic();
  let body: string | undefined;
  if (o.raw !== undefined) body = o.raw;
  else if (o.body !== undefined) body = JSON.stringify(o.body);
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  const res = await fetch(base + path, { method, headers, body, redirect: 'manual' });
  const text = await res.text();
  let parsed: J = {};
  try {
    const v: unknown = JSON.parse(text);
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) parsed = v as J;
  } catch {
    parsed = {};
  }
  return { status: res.status, body: parsed, text, headers: res.headers };
}

export function arr(v: unknown): J[] {
  if (!Array.isArray(v)) throw new Error(`expected array, got ${JSON.stringify(v)}`);
  return v.filter((x): x is J => typeof x === 'object' && x !== null);
}

export function s(v: unknown): string {
  if (typeof v !== 'string') throw new Error(`expected string, got ${JSON.stringify(v)}`);
  return v;
}

let seq = 0;
export function oid(prefix = 'T'): string {
  seq += 1;
  return `${prefix}-${process.pid}-${Date.now()}-${seq}`;
}

export function chargeBody(orderId: string, amount = 150000, extra: J = {}): J {
  return {
    payment_type: 'bank_transfer',
    transaction_details: { order_id: orderId, gross_amount: amount },
    bank_transfer: { bank: 'bca' },
    ...extra,
  };
}

export async function charge(
  base: string,
  orderId: string,
  extra: J = {},
  headers: Record<string, string> = {},
): Promise<Res> {
  return call(base, 'POST', '/v2/charge', { body: chargeBody(orderId, 150000, extra), headers });
}

export async function waitFor<T>(
  fn: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 5000,
  stepMs = 20,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > until) throw new Error('waitFor: timed out');
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

export interface Received {
  at: number;
  path: string;
  headers: IncomingMessage['headers'];
  body: J;
}

export interface Receiver {
  url: string;
  received: Received[];
  close(): Promise<void>;
}

/** A loopback notification receiver; `answer` picks the status for the n-th request (0-based). */
export async function receiver(
  answer: (n: number, req: IncomingMessage) => number | { status: number; location?: string } = () => 200,
): Promise<Receiver> {
  const received: Received[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: J = {};
      try {
        body = JSON.parse(text) as J;
      } catch {
        body = {};
      }
      const n = received.length;
      received.push({ at: Date.now(), path: req.url ?? '/', headers: req.headers, body });
      const a = answer(n, req);
      const r = typeof a === 'number' ? { status: a } : a;
      if (r.location) res.setHeader('location', r.location);
      res.statusCode = r.status;
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export async function notifications(base: string, query = ''): Promise<J[]> {
  const r = await call(base, 'GET', `/_sim/notifications${query}`, { auth: false });
  return arr(r.body.notifications);
}
