/**
 * docs/first-payment.md, run as a reader would: its shell blocks in order (the example receiver,
 * the service, the curl calls) against a started service and its embedded simulator, with the
 * documented ports replaced by free ones. The answers and the event that arrives are compared with
 * the JSON the page shows.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, startServiceProcess, stopServiceProcess, type ServiceProcess } from '../helpers/child.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const GUIDE = fs.readFileSync(path.join(ROOT, 'docs/first-payment.md'), 'utf8');

/** The fenced blocks of a markdown text with their language. */
export function fencedBlocks(markdown: string): Array<{ lang: string; code: string }> {
  return [...markdown.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1] ?? '', code: m[2] ?? '' }));
}

/** The leading `NAME=value` assignments of a command line. */
function assignments(line: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const word of line.trim().split(/\s+/)) {
    const m = /^([A-Z_]+)=(\S*)$/.exec(word);
    if (!m?.[1]) break;
    env[m[1]] = m[2] ?? '';
  }
  return env;
}

/** A documented JSON sample with `…` for what varies: every other value must be as shown. */
function matchesSample(actual: Record<string, unknown>, sample: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(sample)) {
    if (k === '…') continue;
    expect(actual, k).toHaveProperty(k);
    if (typeof v === 'string' && v.includes('…')) {
      expect(String(actual[k]).startsWith(v.slice(0, v.indexOf('…'))), `${k}: ${String(actual[k])}`).toBe(true);
    } else expect(actual[k], k).toEqual(v);
  }
}

describe('docs/first-payment.md', () => {
  const opened: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const close of opened.reverse()) await close();
  });

  it('runs from the receiver to the event it prints, as written', { timeout: 60_000 }, async () => {
    const ports = { service: await freePort(), simulator: await freePort(), receiver: await freePort() };
    const local = (code: string) =>
      code
        .replaceAll('127.0.0.1:3000', `127.0.0.1:${ports.service}`)
        .replaceAll('127.0.0.1:3001', `127.0.0.1:${ports.simulator}`)
        .replaceAll('127.0.0.1:8080', `127.0.0.1:${ports.receiver}`)
        .replaceAll('RECEIVER_PORT=8080', `RECEIVER_PORT=${ports.receiver}`);
    const blocks = fencedBlocks(GUIDE);
    const shell = blocks.filter((b) => b.lang === 'sh').map((b) => local(b.code));
    const samples = blocks
      .filter((b) => b.lang === 'json')
      .map((b) => JSON.parse(local(b.code)) as Record<string, unknown>);
    expect(shell.length).toBe(6);
    expect(samples.length).toBe(2);
    const [receiverCmd, serviceCmd, erpShape, directShape, pay, status] = shell as [
      string,
      string,
      string,
      string,
      string,
      string,
    ];

    // 1. The receiver, exactly as the block says (through the shell), then the service.
    expect(receiverCmd).toContain('node examples/erp-receiver.mjs');
    // Its own process group, so stopping it stops the shell and the node process it started.
    const receiver: ChildProcess = spawn('bash', ['-c', receiverCmd], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let printed = '';
    receiver.stdout?.on('data', (c: Buffer) => (printed += c.toString('utf8')));
    receiver.stderr?.on('data', (c: Buffer) => (printed += c.toString('utf8')));
    opened.push(async () => {
      if (receiver.pid !== undefined && receiver.exitCode === null) process.kill(-receiver.pid, 'SIGTERM');
    });
    await expect.poll(() => printed, { timeout: 10_000 }).toContain(`listening on port ${ports.receiver}`);

    expect(serviceCmd).toMatch(/ npm start\n?$/);
    const data = fs.mkdtempSync(path.join(os.tmpdir(), 'paylink-first-payment-'));
    opened.push(async () => fs.rmSync(data, { recursive: true, force: true }));
    const service: ServiceProcess = await startServiceProcess({
      ...assignments(serviceCmd),
      PORT: String(ports.service),
      SIMULATOR_PORT: String(ports.simulator),
      DATA_DIR: data,
      LOG_DIR: path.join(data, 'logs'),
    });
    opened.unshift(() => stopServiceProcess(service, 'SIGTERM'));

    const run = (cmd: string): Record<string, unknown> => {
      const r = spawnSync('bash', ['-c', cmd], { cwd: ROOT, encoding: 'utf8', timeout: 15_000 });
      expect(r.status, `${cmd}\n${r.stderr}`).toBe(0);
      return JSON.parse(r.stdout) as Record<string, unknown>;
    };

    // 2. Both shapes create a link; the ERP shape's answer is the one the page shows.
    const link = run(erpShape);
    matchesSample(link, samples[0] ?? {});
    expect(String(link.payment_url)).toContain(`127.0.0.1:${ports.simulator}`);
    expect(run(directShape)).toMatchObject({ order_id: 'SO-77:3', status: 'pending', nominal: 150000 });

    // 3. Paying on the simulator; 4. the receiver prints the verified event, shaped as shown.
    // A link is paid through a purchase of its own: the gateway suffixes the link's order id.
    const paid = run(pay);
    expect(paid.transaction_status).toBe('settlement');
    expect(String(paid.order_id).startsWith(`${String(link.gateway_order_id)}-`), String(paid.order_id)).toBe(true);
    await expect.poll(() => printed, { timeout: 15_000 }).toContain('"status":"paid"');
    const line = printed.split('\n').find((l) => l.includes('"status":"paid"')) ?? '{}';
    const event = JSON.parse(line) as Record<string, unknown>;
    const sample = samples[1] ?? {};
    expect(Object.keys(event).sort()).toEqual(Object.keys(sample).sort());
    matchesSample(event, sample);
    expect(run(status)).toMatchObject({ order_id: 'INV/2026/0042:1', status: 'paid' });
  });

  it('the README links this page before anything else a developer reads', () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const first = readme.indexOf('docs/first-payment.md');
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThan(readme.indexOf('## Quick start'));
  });
});
