/**
 * The service as a process: the start-up warning for the Dev/Test endpoints, and a SIGTERM that
 * drains, stops and exits 0, answering a waiting pull of the ERP feed at once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '../helpers/stores.js';
import { startServiceProcess, stopServiceProcess, type ServiceProcess } from '../helpers/child.js';

describe('the service process', () => {
  let child: ServiceProcess | undefined;
  let dir = '';
  afterEach(async () => {
    if (child) await stopServiceProcess(child, 'SIGKILL');
    child = undefined;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('warns at start-up when the Dev/Test endpoints are on, serves them, and stops cleanly on SIGTERM', async () => {
    dir = tempDir('paylink-proc-');
    child = await startServiceProcess({
      DATA_DIR: dir,
      LOG_DIR: path.join(dir, 'logs'),
      LOG_EXPOSE_API: 'true',
      log_user: 'ops',
      log_pass: 'process-test-operator-pass',
    });
    const warning = child
      .output()
      .split('\n')
      .find((l) => l.includes('LOG_EXPOSE_API is on'));
    expect(warning && JSON.parse(warning)).toMatchObject({ level: 'warn' });
    const auth = { authorization: `Basic ${Buffer.from('ops:process-test-operator-pass').toString('base64')}` };
    expect((await fetch(`${child.url}/echo`, { headers: auth })).status).toBe(200);
    expect((await fetch(`${child.url}/health`)).status).toBe(200);
    expect(await stopServiceProcess(child, 'SIGTERM')).toEqual({ code: 0, signal: null });
    expect(child.output()).toContain('shutting down: draining requests and stopping workers');
  });

  it('says nothing about Dev/Test endpoints when they are off, and they do not exist', async () => {
    dir = tempDir('paylink-proc-');
    child = await startServiceProcess({
      DATA_DIR: dir,
      LOG_DIR: path.join(dir, 'logs'),
      log_user: 'ops',
      log_pass: 'process-test-operator-pass',
    });
    expect(child.output()).not.toContain('LOG_EXPOSE_API');
    const auth = { authorization: `Basic ${Buffer.from('ops:process-test-operator-pass').toString('base64')}` };
    expect((await fetch(`${child.url}/echo`, { headers: auth })).status).toBe(404);
  });

  it('on SIGTERM a waiting pull of the ERP feed is answered at once with no events and its cursor, and the process exits 0', async () => {
    dir = tempDir('paylink-proc-');
    const key = 'process-test-erp-key-0123456789';
    child = await startServiceProcess({
      DATA_DIR: dir,
      LOG_DIR: path.join(dir, 'logs'),
      API_KEYS: key,
      log_user: 'ops',
      log_pass: 'process-test-operator-pass',
    });
    const headers = { authorization: `Bearer ${key}` };
    const start = (await (await fetch(`${child.url}/api/erp-events`, { headers })).json()) as {
      data: unknown[];
      next_cursor: string;
    };
    expect(start.data).toEqual([]);
    const waiting = fetch(`${child.url}/api/erp-events?after=${encodeURIComponent(start.next_cursor)}&wait=30`, {
      headers,
    }).then(async (res) => ({ status: res.status, body: await res.text() }));
    // Long enough for the pull to be in its 30 s wait (answers are logged only when they complete).
    await new Promise((r) => setTimeout(r, 1_000));
    const stopped = stopServiceProcess(child, 'SIGTERM');
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ data: [], next_cursor: start.next_cursor });
    // Well before the pull's own 30 s and the process's 15 s deadline (which exits 1).
    expect(await stopped).toEqual({ code: 0, signal: null });
    expect(child.output()).toContain('shutdown finished');
  }, 40_000);
});
