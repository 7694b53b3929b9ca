/**
 * End-to-end harness: the gateway simulator on a loopback port 0 and the real app pointed at it.
 * Reusable by every e2e suite:
 *
 *   const e = await startE2E('sqlite', { listen: true });   // listen → the simulator notifies <url>/webhook/midtrans
 *   await e.app.inject(...) or fetch(`${e.url}/...`);
 *   await e.sim.post('/_sim/transactions/ORDER/pay');
 *   await e.close();
 */
import type { ServiceOptions } from '../../src/services.js';
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '../../simulator/index.js';
import { makeTestApp, type TestContext } from './services.js';

export const E2E_SERVER_KEY = 'SB-Mid-server-e2e-test-key';

export interface SimClient {
  baseUrl: string;
  get(path: string): Promise<{ status: number; body: unknown; text: string }>;
  post(path: string, body?: unknown): Promise<{ status: number; body: unknown; text: string }>;
  put(path: string, body: unknown): Promise<{ status: number; body: unknown; text: string }>;
  del(path: string): Promise<{ status: number; body: unknown; text: string }>;
  /** A gateway API call with the server key (Basic auth), e.g. `gateway('GET', '/v1/payment-links/X')`. */
  gateway(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown; text: string }>;
  /** Gateway calls the simulator received (`GET /_sim/requests`), optionally filtered by path substring. */
  requests(
    path?: string,
  ): Promise<Array<{ method: string; path: string; api?: string; body?: unknown; idempotency_key?: string }>>;
}

export interface E2EContext extends TestContext {
  sim: SimClient;
  simulator: RunningSimulator;
  /** The app's own base URL when started with `listen: true`. */
  url?: string;
  serverKey: string;
}

export interface E2EOptions {
  serverKey?: string;
  /** Extra environment for the app (e.g. API_KEYS, ERP_NOTIFY_URL). */
  env?: Record<string, string>;
  serviceOptions?: ServiceOptions;
  /** Listen on 127.0.0.1:0 and point the simulator's notifications at `<url>/webhook/midtrans`. */
  listen?: boolean;
  simulator?: Partial<SimulatorOptions>;
}

async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  extraHeaders: Record<string, string> = {},
) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...extraHeaders },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    // HTML pages and other non-JSON answers stay text
  }
  return { status: res.status, body: parsed, text };
}

export function simClient(baseUrl: string, serverKey = E2E_SERVER_KEY): SimClient {
  const basic = `Basic ${Buffer.from(`${serverKey}:`).toString('base64')}`;
  return {
    baseUrl,
    gateway: (m, p, b) => call(baseUrl, m, p, b, { authorization: basic, accept: 'application/json' }),
    get: (p) => call(baseUrl, 'GET', p),
    post: (p, b) => call(baseUrl, 'POST', p, b ?? {}),
    put: (p, b) => call(baseUrl, 'PUT', p, b),
    del: (p) => call(baseUrl, 'DELETE', p),
    async requests(path) {
      const r = await call(baseUrl, 'GET', `/_sim/requests${path ? `?path=${encodeURIComponent(path)}` : ''}`);
      const body = r.body as { requests?: Array<{ method: string; path: string }> } | undefined;
      return body?.requests ?? [];
    },
  };
}

export async function startE2E(kind: 'sqlite' | 'postgres', o: E2EOptions = {}): Promise<E2EContext> {
  const serverKey = o.serverKey ?? E2E_SERVER_KEY;
  const simulator = await startSimulator({ serverKey, logger: false, ...o.simulator });
  let ctx: TestContext;
  try {
    ctx = await makeTestApp(
      kind,
      { MIDTRANS_MODE: 'simulator', MIDTRANS_SERVER_KEY: serverKey, ...o.env },
      { ...o.serviceOptions, simulatorBaseUrl: simulator.baseUrl },
    );
  } catch (err) {
    await simulator.close();
    throw err;
  }
  let url: string | undefined;
  if (o.listen) {
    url = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
    simulator.setNotificationUrl(`${url}/webhook/midtrans`);
  }
  return {
    ...ctx,
    sim: simClient(simulator.baseUrl, serverKey),
    simulator,
    url,
    serverKey,
    async close() {
      await simulator.close();
      await ctx.close();
    },
  };
}
