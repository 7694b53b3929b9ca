import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { deliveryHeaders } from '../../src/erp/deliver.js';
import { testEvent } from '../../src/erp/events.js';
import { introduction } from '../../src/http/reference/guide.js';
// The guide's Node example, exactly as docs/erp-integration.md shows it.
import { createReceiver, verifyPaylinkEvent } from '../../examples/erp-receiver.mjs';

const SECRET = 'whsec_ZXJwLWd1aWRlLXRlc3Qtc2VjcmV0LTAxMjM0NTY3ODk=';

describe('the ERP integration guide (Node)', () => {
  it('verifies what paylink signs, and refuses a changed body or another secret', () => {
    const body = JSON.stringify({
      type: 'payment.status_changed',
      event_id: 'e-1',
      order_id: 'INV/1:1',
      status: 'paid',
      status_version: 1,
    });
    const headers = deliveryHeaders('e-1', new Date(), body, SECRET);
    expect(verifyPaylinkEvent(SECRET, body, headers)).toMatchObject({ event_id: 'e-1', status: 'paid' });
    expect(() => verifyPaylinkEvent(SECRET, body.replace('paid', 'refunded'), headers)).toThrow();
    expect(() => verifyPaylinkEvent('whsec_b3RoZXItc2VjcmV0LW90aGVyLXNlY3JldA==', body, headers)).toThrow();
    const raw = 'a raw secret, not whsec';
    expect(verifyPaylinkEvent(raw, body, deliveryHeaders('e-1', new Date(), body, raw))).toMatchObject({
      event_id: 'e-1',
    });
  });

  it('the example receiver answers 204, applies each status_version once and ignores older news', async () => {
    const applied: Array<{ status: string; status_version: number }> = [];
    const server = createReceiver(SECRET, (e: { status: string; status_version: number }) => applied.push(e));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const send = async (id: string, event: object, secret = SECRET) => {
      const body = JSON.stringify(event);
      return (
        await fetch(url, {
          method: 'POST',
          body,
          headers: { 'content-type': 'application/json', ...deliveryHeaders(id, new Date(), body, secret) },
        })
      ).status;
    };
    const changed = { type: 'payment.status_changed' };
    expect(await send('e-1', { ...changed, event_id: 'e-1', order_id: 'X:1', status: 'paid', status_version: 1 })).toBe(
      204,
    );
    expect(
      await send('e-2', {
        ...changed,
        event_id: 'e-2',
        order_id: 'X:1',
        status: 'partially_refunded',
        refunded_amount: 10,
        status_version: 2,
      }),
    ).toBe(204);
    expect(await send('e-1', { ...changed, event_id: 'e-1', order_id: 'X:1', status: 'paid', status_version: 1 })).toBe(
      204,
    );
    expect(
      await send(
        'e-3',
        { ...changed, event_id: 'e-3', order_id: 'X:1', status: 'refunded', status_version: 3 },
        'whsec_d3Jvbmctc2VjcmV0LXdyb25nLXNlY3JldA==',
      ),
    ).toBe(401);
    expect(applied.map((e) => [e.status, e.status_version])).toEqual([
      ['paid', 1],
      ['partially_refunded', 2],
    ]);
    await new Promise((r) => server.close(r));
  });

  it('the example receiver acknowledges a test event without applying it, whatever its status says', async () => {
    const applied: unknown[] = [];
    const server = createReceiver(SECRET, (e: unknown) => applied.push(e));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const send = async (event: { event_id: string; [k: string]: unknown }) => {
      const body = JSON.stringify(event);
      return (
        await fetch(url, {
          method: 'POST',
          body,
          headers: { 'content-type': 'application/json', ...deliveryHeaders(event.event_id, new Date(), body, SECRET) },
        })
      ).status;
    };
    const fresh = testEvent({ order_id: 'T:1' }, 't-1', new Date());
    expect(fresh).toMatchObject({ type: 'payment.test', test: true, gross_amount: 0 });
    expect(fresh.status).not.toBe('paid');
    expect(await send(fresh)).toBe(204);
    // Even a test event dressed as a payment (older paylink versions defaulted to it) is not applied.
    expect(await send({ ...fresh, event_id: 't-2', status: 'paid', status_version: 5 })).toBe(204);
    expect(applied).toEqual([]);
    await new Promise((r) => server.close(r));
  });

  it('run as a program without ERP_WEBHOOK_SECRET, the example refuses to start and says why', () => {
    const run = spawnSync(process.execPath, ['examples/erp-receiver.mjs'], {
      env: { PATH: process.env.PATH ?? '', RECEIVER_PORT: '0' },
      encoding: 'utf8',
      timeout: 10_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('ERP_WEBHOOK_SECRET is not set');
    expect(run.stdout).not.toContain('listening');
  });

  it('the ERP integration guide shows the example file as it is', () => {
    const guide = fs.readFileSync('docs/erp-integration.md', 'utf8');
    expect(guide).toContain(fs.readFileSync('examples/erp-receiver.mjs', 'utf8').trim());
  });

  it("the PHP snippets hand verify() the header names in lower case (getallheaders() keeps the sender's case)", () => {
    for (const [where, text] of [
      ['docs/erp-integration.md', fs.readFileSync('docs/erp-integration.md', 'utf8')],
      ['/docs', introduction()],
    ] as const) {
      expect(text, where).toContain('array_change_key_case(getallheaders(), CASE_LOWER)');
      expect(text, where).not.toMatch(/verify\([^)]*, getallheaders\(\)\)/);
    }
  });
});

const PYTHON = spawnSync('python3', ['--version']).status === 0;

describe.skipIf(!PYTHON)('the ERP integration guide (Python, standard library only)', () => {
  /** The guide's package-free Python block, exactly as docs/erp-integration.md shows it. */
  const snippet = (() => {
    const guide = fs.readFileSync('docs/erp-integration.md', 'utf8');
    const blocks = [...guide.matchAll(/^```python\n([\s\S]*?)^```$/gm)].map((m) => m[1] ?? '');
    const found = blocks.filter((b) => b.includes('def verify_paylink_event('));
    expect(found).toHaveLength(1);
    return found[0] ?? '';
  })();

  /** Runs the snippet's verify_paylink_event on one delivery: the event it returns, or the refusal's words. */
  function verifyInPython(secret: string, body: string, headers: Record<string, string>): unknown {
    const driver = `${snippet}
import sys
given = json.load(sys.stdin)
try:
    print(json.dumps({"event": verify_paylink_event(given["secret"], given["body"].encode(), given["headers"])}))
except ValueError as e:
    print(json.dumps({"refused": str(e)}))
`;
    const run = spawnSync('python3', ['-I', '-c', driver], {
      input: JSON.stringify({ secret, body, headers }),
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    return JSON.parse(run.stdout) as unknown;
  }

  it('verifies what paylink signs (whsec_ and raw secrets), and refuses a changed body, another secret or an old delivery', () => {
    const body = JSON.stringify({
      type: 'payment.status_changed',
      event_id: 'e-py-1',
      order_id: 'INV/1:1',
      status: 'paid',
      status_version: 1,
    });
    const now = new Date();
    const headers = deliveryHeaders('e-py-1', now, body, SECRET);
    expect(verifyInPython(SECRET, body, headers)).toEqual({ event: JSON.parse(body) });
    expect(verifyInPython(SECRET, body.replace('paid', 'refunded'), headers)).toEqual({ refused: 'bad signature' });
    expect(verifyInPython('whsec_b3RoZXItc2VjcmV0LW90aGVyLXNlY3JldA==', body, headers)).toEqual({
      refused: 'bad signature',
    });
    const raw = 'a raw secret, not whsec';
    expect(verifyInPython(raw, body, deliveryHeaders('e-py-1', now, body, raw))).toEqual({ event: JSON.parse(body) });
    const old = deliveryHeaders('e-py-1', new Date(now.getTime() - 10 * 60_000), body, SECRET);
    expect(verifyInPython(SECRET, body, old)).toEqual({
      refused: 'webhook-timestamp is more than 5 minutes from now',
    });
    // A test event signed the same way verifies too: the receiver then acknowledges it without applying it.
    const test = testEvent({ order_id: 'T:py' }, 'e-py-test', now);
    const testBody = JSON.stringify(test);
    expect(verifyInPython(SECRET, testBody, deliveryHeaders('e-py-test', now, testBody, SECRET))).toMatchObject({
      event: { type: 'payment.test' },
    });
  });
});
