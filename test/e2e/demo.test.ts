/**
 * `npm run demo`: its ERP receiver verifies signatures for real, and `--auto-pay` says what it does
 * (no browser involved) and ends after the verified paid event.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { deliveryHeaders } from '../../src/erp/deliver.js';
import { startReceiver } from '../../scripts/demo.js';

const SECRET = `whsec_${Buffer.from('demo-receiver-test-secret-0123456789').toString('base64')}`;
const ROOT = path.resolve(import.meta.dirname, '../..');

describe('the demo', () => {
  it('its receiver accepts a delivery signed with the secret and refuses a wrong or missing signature', async () => {
    const printed: string[] = [];
    const receiver = await startReceiver(SECRET, (l) => printed.push(l));
    try {
      const send = (body: string, headers: Record<string, string>) =>
        fetch(receiver.url, { method: 'POST', body, headers });
      const body = JSON.stringify({
        type: 'payment.status_changed',
        event_id: 'd-1',
        order_id: 'D:1',
        status: 'paid',
        status_version: 1,
      });
      expect((await send(body, deliveryHeaders('d-1', new Date(), body, SECRET))).status).toBe(200);
      const other = `whsec_${Buffer.from('another-secret-another-secret-0000').toString('base64')}`;
      expect((await send(body, deliveryHeaders('d-2', new Date(), body, other))).status).toBe(401);
      expect((await send(body, deliveryHeaders('d-3', new Date(), body, undefined))).status).toBe(401);
      const signed = deliveryHeaders('d-4', new Date(), body, SECRET);
      expect((await send(body.replace('paid', 'refunded'), signed)).status).toBe(401);
      expect(receiver.events).toEqual([JSON.parse(body)]);
      expect(printed.filter((l) => l.includes('signature verified'))).toHaveLength(1);
      expect(printed.filter((l) => l.includes('refused'))).toHaveLength(3);
    } finally {
      await receiver.close();
    }
  });

  it('--auto-pay pays by itself, says so, and stops after the verified paid event', async () => {
    const proc = spawn(process.execPath, ['--import', 'tsx', 'scripts/demo.ts', '--auto-pay'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    proc.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    proc.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => proc.kill('SIGKILL'), 60_000);
      proc.once('exit', (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    expect(code, out.slice(-2000)).toBe(0);
    expect(out).not.toContain('Open it in a browser');
    expect(out).toContain('Paying it now');
    expect(out).toMatch(/signature verified:\n\{\n {2}"type": "payment.status_changed"/);
    expect(out).toContain('"status": "paid"');
  }, 70_000);
});
