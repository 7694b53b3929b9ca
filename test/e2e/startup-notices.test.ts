/**
 * Start-up as a process: each insecure or inert default in force is said once, with the addresses
 * of the service, its console, its reference and the gateway simulator; nothing is said about a
 * default that was replaced.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/stores.js';
import { startServiceProcess, stopServiceProcess, type ServiceProcess } from '../helpers/child.js';

const NOTICES = {
  API_KEYS: 'API_KEYS is not set',
  ERP_NOTIFY_URL: 'ERP_NOTIFY_URL is not set',
  MIDTRANS_MODE: 'MIDTRANS_MODE is simulator',
  log_pass: 'operator credentials generated',
};

type Line = Record<string, unknown>;
const lines = (out: string): Line[] =>
  out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Line);

describe('start-up notices', () => {
  let child: ServiceProcess | undefined;
  let dir = '';
  afterEach(async () => {
    if (child) await stopServiceProcess(child, 'SIGKILL');
    child = undefined;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('says once each default in force (open ERP endpoints, no ERP push, simulator, generated password) and where everything is', async () => {
    dir = tempDir('paylink-notices-');
    child = await startServiceProcess({ DATA_DIR: dir, LOG_DIR: path.join(dir, 'logs') });
    const out = child.output();
    const parsed = lines(out);
    for (const [setting, text] of Object.entries(NOTICES)) {
      const found = parsed.filter((l) => typeof l.msg === 'string' && l.msg.includes(text));
      expect(found, setting).toHaveLength(1);
      expect(found[0]).toMatchObject({ level: 'warn', setting });
    }
    // The generated password is printed once, on the terminal only.
    await expect.poll(() => (child?.output() ?? '').match(/password: \S+/g)?.length ?? 0).toBe(1);
    const listening = parsed.filter((l) => typeof l.msg === 'string' && l.msg.startsWith('paylink listening'));
    expect(listening).toHaveLength(1);
    const msg = String(listening[0]?.msg);
    for (const p of ['/console', '/docs']) expect(msg).toContain(`${child.url}${p}`);
    expect(msg).toContain(child.url);
    expect(msg).toMatch(/gateway simulator http:\/\/127\.0\.0\.1:\d+/);
    // One line says the service listens: Fastify's own "Server listening at" lines are left out.
    expect(parsed.filter((l) => /listening/i.test(String(l.msg))).map((l) => l.msg)).toEqual([msg]);
  });

  it('starts in development with weak secrets and says each one once, naming the variable and not the value', async () => {
    dir = tempDir('paylink-notices-');
    const weak = { log_user: 'a', log_pass: 'b', API_KEYS: 'k1', ERP_WEBHOOK_SECRET: 'whsec_abc' };
    child = await startServiceProcess({ DATA_DIR: dir, LOG_DIR: path.join(dir, 'logs'), ...weak });
    const parsed = lines(child.output());
    for (const setting of ['log_pass', 'API_KEYS', 'ERP_WEBHOOK_SECRET']) {
      const found = parsed.filter((l) => l.setting === setting && String(l.msg).includes('production refuses'));
      expect(found, setting).toHaveLength(1);
      expect(found[0], setting).toMatchObject({ level: 'warn' });
      expect(String(found[0]?.msg), setting).toMatch(new RegExp(`^${setting} is shorter than \\d+ characters`));
    }
    for (const value of ['whsec_abc', '"k1"']) expect(child.output()).not.toContain(value);
  });

  it('keeps LOG_DIR and its files private (0700 and 0600) under an open umask, and narrows an old file', async () => {
    dir = tempDir('paylink-notices-');
    const logs = path.join(dir, 'logs');
    fs.mkdirSync(logs, { mode: 0o755 });
    fs.chmodSync(logs, 0o755);
    fs.writeFileSync(path.join(logs, 'paylink.2026-01-01.1.log'), '{}\n', { mode: 0o644 });
    fs.chmodSync(path.join(logs, 'paylink.2026-01-01.1.log'), 0o644);
    const before = process.umask(0);
    try {
      child = await startServiceProcess({ DATA_DIR: dir, LOG_DIR: logs });
    } finally {
      process.umask(before);
    }
    expect((fs.statSync(logs).mode & 0o777).toString(8)).toBe('700');
    const files = fs.readdirSync(logs).filter((f) => f.endsWith('.log'));
    expect(files.length).toBeGreaterThanOrEqual(2);
    for (const f of files) expect((fs.statSync(path.join(logs, f)).mode & 0o777).toString(8), f).toBe('600');
  });

  it('says nothing about the defaults that were replaced', async () => {
    dir = tempDir('paylink-notices-');
    const erp = http.createServer((_req, res) => res.writeHead(204).end());
    await new Promise<void>((r) => erp.listen(0, '127.0.0.1', r));
    try {
      child = await startServiceProcess({
        DATA_DIR: dir,
        LOG_DIR: path.join(dir, 'logs'),
        API_KEYS: 'startup-notice-api-key-0123456789',
        ERP_NOTIFY_URL: `http://127.0.0.1:${(erp.address() as AddressInfo).port}/erp`,
        log_user: 'ops',
        log_pass: 'startup-notice-operator-pass',
      });
      const parsed = lines(child.output());
      for (const text of [NOTICES.API_KEYS, NOTICES.ERP_NOTIFY_URL, NOTICES.log_pass])
        expect(parsed.filter((l) => String(l.msg).includes(text))).toEqual([]);
      expect(parsed.filter((l) => String(l.msg).includes(NOTICES.MIDTRANS_MODE))).toHaveLength(1);
      expect(child.output()).not.toMatch(/password: /);
    } finally {
      await new Promise((r) => erp.close(r));
    }
  });
});
