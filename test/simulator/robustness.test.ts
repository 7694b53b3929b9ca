import { spawn } from 'node:child_process';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../simulator/index.js';
import { basic, call, start } from './helpers.js';

let sim: RunningSimulator;
beforeAll(async () => {
  sim = await start();
});
afterAll(async () => {
  await sim.close();
});

const detailsArb = fc.record(
  {
    order_id: fc.oneof(fc.string({ maxLength: 60 }), fc.integer(), fc.constant(null)),
    gross_amount: fc.oneof(
      fc.integer({ min: -5, max: 10_000_000 }),
      fc.double(),
      fc.string({ maxLength: 8 }),
      fc.constant(null),
    ),
  },
  { requiredKeys: [] },
);
const bodyArb = fc.oneof(
  fc.record(
    {
      payment_type: fc.constantFrom('bank_transfer', 'gopay', 'qris', 'cstore', 'echannel', 'credit_card', 'x'),
      transaction_details: detailsArb,
      item_details: fc.array(
        fc.record({
          name: fc.string({ maxLength: 60 }),
          price: fc.integer(),
          quantity: fc.integer({ min: -1, max: 3 }),
        }),
        { maxLength: 3 },
      ),
      customer_details: fc.dictionary(fc.constantFrom('first_name', 'email', 'phone'), fc.string({ maxLength: 60 })),
      bank_transfer: fc.record({ bank: fc.constantFrom('bca', 'bni', 'zzz') }),
      expiry: fc.record({ duration: fc.integer({ min: -1, max: 5 }), unit: fc.constantFrom('day', 'minutes', 'year') }),
    },
    { requiredKeys: [] },
  ),
  fc.jsonValue(),
);

describe('robustness', () => {
  it('random bodies on every create endpoint get a gateway-shaped answer; a 500 only for a non-object charge body', async () => {
    const paths: [string, number[], (b: Record<string, unknown>) => boolean][] = [
      ['/v2/charge', [200, 400, 406, 411], (b) => typeof b.status_code === 'string'],
      ['/snap/v1/transactions', [201, 400], (b) => typeof b.token === 'string' || Array.isArray(b.error_messages)],
      [
        '/v1/payment-links',
        [200, 400, 409],
        (b) => typeof b.payment_url === 'string' || Array.isArray(b.error_messages),
      ],
    ];
    await fc.assert(
      fc.asyncProperty(bodyArb, fc.constantFrom(...paths), async (body, [path, allowed, shaped]) => {
        const r = await call(sim.baseUrl, 'POST', path, { body });
        if (path === '/v2/charge' && (typeof body !== 'object' || body === null || Array.isArray(body))) {
          // The gateway's parser fails on a JSON null, array or scalar: its "unexpected" 500.
          expect(r.status).toBe(500);
          expect(r.body).toMatchObject({ status_code: '500', status_message: expect.stringContaining('unexpected') });
          return;
        }
        expect(allowed).toContain(r.status);
        expect(shaped(r.body)).toBe(true);
      }),
      { numRuns: 150 },
    );
  });

  it('odd content types and methods do not crash', async () => {
    const r1 = await call(sim.baseUrl, 'POST', '/v2/charge', {
      raw: 'plain text',
      headers: { 'content-type': 'text/plain' },
    });
    expect(r1.status).toBe(400);
    expect(r1.body.status_code).toBe('413');
    const r2 = await call(sim.baseUrl, 'PATCH', '/v2/charge');
    expect(r2.status).toBe(404);
    const r3 = await call(sim.baseUrl, 'POST', '/v1/payment-links', { raw: 'x'.repeat(2_000_000) });
    expect(r3.status).toBe(413);
    expect(Array.isArray(r3.body.error_messages)).toBe(true);
  });
});

describe('GET / and HEAD', () => {
  it('GET / names the simulator without a key; every GET path answers HEAD with its status and no body', async () => {
    const root = await call(sim.baseUrl, 'GET', '/', { auth: false });
    expect(root.status).toBe(200);
    expect(root.body).toEqual({ name: 'midtrans-simulator', base_url: sim.baseUrl });
    for (const [path, status] of [
      ['/', 200],
      ['/v2/no-such-order/status', 404],
      ['/_sim/transactions', 200],
    ] as const) {
      const head = await fetch(sim.baseUrl + path, { method: 'HEAD', headers: { authorization: basic() } });
      expect(head.status).toBe(status);
      expect(head.headers.get('content-type')).toContain('application/json');
      expect(await head.text()).toBe('');
    }
  });
});

function run(env: Record<string, string>, untilOutput?: RegExp): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'simulator/main.ts'], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const onData = (d: Buffer): void => {
      out += d.toString();
      if (untilOutput && untilOutput.test(out)) child.kill('SIGTERM');
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

describe('standalone entry', () => {
  it('rejects bad settings with a clear message and exit 1; prints its URL and stops on SIGTERM', async () => {
    const [bad, good] = await Promise.all([
      run({ SIMULATOR_PORT: 'abc', SIMULATOR_TIME_SCALE: '-1', SIMULATOR_NOTIFICATION_URL: 'nope' }),
      run({ SIMULATOR_PORT: '0', SIMULATOR_HOST: '127.0.0.1' }, /listening on http:\/\/127\.0\.0\.1:\d+/),
    ]);
    expect(bad.code).toBe(1);
    expect(bad.out).toContain('SIMULATOR_PORT must be an integer');
    expect(bad.out).toContain('SIMULATOR_TIME_SCALE must be a positive number');
    expect(bad.out).toContain('SIMULATOR_NOTIFICATION_URL must be an http(s) URL');
    expect(good.out).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+/);
    expect(good.code).toBe(0);
  });
});
