import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { makeLoggedApp, type LoggedApp } from '../helpers/operator-app.js';

/** Unique values that must never reach a log file or a response (PCI 8.6.2, OWASP API3). */
const C = {
  serverKey: 'SB-Mid-server-CANARYsk4f9e2a7c',
  apiKey: 'CANARY-api-key-0b8d3e51aa',
  opPass: 'CANARY-op-pass-61c2f09b7e',
  erpSecret: 'whsec_CANARYerp5d7a1c3e9f0b',
  newServerKey: 'SB-Mid-server-CANARYrotated88',
  newErpSecret: 'whsec_CANARYrotated4471ae',
};
const OPERATOR = { user: 'ops', pass: C.opPass };

function forms(secret: string): string[] {
  const b = (s: string) => Buffer.from(s).toString('base64');
  return [
    secret,
    b(`${secret}:`),
    b(`${secret}:`).replace(/=+$/, ''),
    b(secret).replace(/=+$/, ''),
    encodeURIComponent(secret),
    JSON.stringify(secret).slice(1, -1),
  ];
}

interface Stub {
  url: string;
  seen: Array<{ method?: string; url?: string; headers: http.IncomingHttpHeaders }>;
  close(): Promise<void>;
}

async function stub(answer: (req: http.IncomingMessage) => [number, unknown]): Promise<Stub> {
  const seen: Stub['seen'] = [];
  const server = http.createServer((req, res) => {
    seen.push({ method: req.method, url: req.url, headers: req.headers });
    req.resume();
    req.on('end', () => {
      const [status, body] = answer(req);
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, seen, close: () => new Promise((r) => server.close(() => r())) };
}

describe.each(DATABASE_KINDS)('secret canaries never reach the logs (%s)', (kind) => {
  let ctx: LoggedApp;
  let gateway: Stub;
  let erp: Stub;
  const responses: string[] = [];
  const basic = (pass = C.opPass, user = 'ops') => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
  const send = async (o: InjectOptions) => {
    const res = await ctx.app.inject(o);
    responses.push(JSON.stringify(res.headers), res.body);
    return res;
  };

  beforeAll(async () => {
    gateway = await stub(() => [500, { status_code: '500', status_message: 'internal error' }]);
    erp = await stub(() => [200, { ok: true }]);
    ctx = await makeLoggedApp(
      kind,
      {
        LOG_LEVEL: 'trace',
        LOG_EXPOSE_API: 'true',
        MIDTRANS_MODE: 'sandbox',
        MIDTRANS_SERVER_KEY: C.serverKey,
        MIDTRANS_API_BASE_URL: gateway.url,
        MIDTRANS_APP_BASE_URL: gateway.url,
        API_KEYS: C.apiKey,
        ERP_NOTIFY_URL: `${erp.url}/erp`,
        ERP_WEBHOOK_SECRET: C.erpSecret,
      },
      {},
      OPERATOR,
    );
    // The outbox worker delivers the test event to the ERP stub (signed with the ERP secret).
    for (const w of ctx.services.workers) w.start();

    await send({ method: 'GET', url: '/api/config', headers: { authorization: basic() } });
    expect(
      (
        await send({
          method: 'GET',
          url: `/api/config?password=${C.opPass}&serverKey=${C.serverKey}`,
          headers: { authorization: basic() },
        })
      ).statusCode,
    ).toBe(400);
    await send({ method: 'GET', url: '/api/config', headers: { authorization: basic('wrong', C.opPass) } });
    await send({ method: 'GET', url: '/api/config', headers: { authorization: basic(C.opPass, 'ops') } });
    await send({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${C.apiKey}` } });
    await send({
      method: 'POST',
      url: '/echo?token=x',
      headers: {
        authorization: basic(),
        'x-api-key': C.apiKey,
        cookie: `session=${C.opPass}`,
        'content-type': 'application/json',
      },
      payload: { hello: 'world' },
    });
    await send({
      method: 'POST',
      url: '/api/payment-links',
      headers: { authorization: `Bearer ${C.apiKey}`, 'content-type': 'application/json' },
      payload: { order_id: 'CANARY-ORDER-1', nominal: 10000 },
    });
    await send({ method: 'GET', url: '/api/payment-links/CANARY-ORDER-2', headers: { 'x-api-key': C.apiKey } });
    await send({ method: 'GET', url: '/api/payment-links/CANARY-ORDER-2', headers: { 'x-api-key': `${C.apiKey}x` } });
    await ctx.services.gateway.status('CANARY-ORDER-3').catch(() => undefined);
    await send({
      method: 'POST',
      url: '/api/config',
      headers: { authorization: basic(), 'content-type': 'application/json' },
      payload: { gateway: { server_key: C.newServerKey }, erp: { webhook_secret: C.newErpSecret } },
    });
    await send({ method: 'GET', url: '/api/config', headers: { authorization: basic() } });
    await ctx.services.gateway.status('CANARY-ORDER-4').catch(() => undefined);
    await send({
      method: 'POST',
      url: '/test-notify-erp',
      headers: { authorization: basic(), 'content-type': 'application/json' },
      payload: {},
    });
    // Code that logs a secret by mistake, inside a message and under an unexpected key.
    ctx.services.logger.error(
      {
        err: new Error(`call failed with key ${C.serverKey}`),
        debug: { headerValue: `Basic ${Buffer.from(`${C.newServerKey}:`).toString('base64')}` },
      },
      `oops ${C.erpSecret}`,
    );
  });
  afterAll(async () => {
    await ctx.close();
    await gateway.close();
    await erp.close();
  });

  it('the test is meaningful: the secrets did go out, in headers', () => {
    expect(erp.seen.length).toBeGreaterThan(0);
    const auths = gateway.seen.map((s) => s.headers.authorization);
    expect(auths).toContain(`Basic ${Buffer.from(`${C.serverKey}:`).toString('base64')}`);
    expect(auths).toContain(`Basic ${Buffer.from(`${C.newServerKey}:`).toString('base64')}`);
  });

  it('no log file holds any canary, raw, base64, URL-encoded or JSON-escaped', async () => {
    const raw = await ctx.rawLogs();
    expect(raw.length).toBeGreaterThan(1000);
    expect(raw).toContain('[redacted]');
    for (const [name, secret] of Object.entries(C)) {
      for (const f of forms(secret)) expect(raw.includes(f), `${name} as ${f}`).toBe(false);
    }
  });

  it('no response body or header holds any canary', () => {
    const all = responses.join('\n');
    for (const [name, secret] of Object.entries(C)) {
      for (const f of forms(secret)) expect(all.includes(f), `${name} as ${f}`).toBe(false);
    }
  });
});
