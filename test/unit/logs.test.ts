import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import Fastify, { LogController, type FastifyBaseLogger } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import {
  bindLogContext,
  closeLogger,
  createLogger,
  flushLogger,
  registerLogSecrets,
} from '../../src/platform/logging/logger.js';
import { createSecretScrubber, redactHeaders, redactUrl } from '../../src/platform/logging/redact.js';
import { tailLogFile } from '../../src/platform/logging/files.js';
import { decodeLogCursor, queryLogs } from '../../src/platform/logging/query.js';
import { tempDir } from '../helpers/stores.js';

const dirs: string[] = [];
const fresh = () => {
  const d = tempDir('paylink-logs-');
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
const read = (dir: string) =>
  fs
    .readdirSync(dir)
    .sort()
    .map((f) => fs.readFileSync(path.join(dir, f), 'utf8'))
    .join('');

describe('secret scrubbing', () => {
  it('replaces every form of a registered secret and leaves other text alone', () => {
    const s = createSecretScrubber();
    s.add(['SB-Mid-server-abc123', undefined, 'x']);
    const basic = Buffer.from('SB-Mid-server-abc123:').toString('base64');
    expect(
      s.scrub(`key=SB-Mid-server-abc123 auth=Basic ${basic} url=${encodeURIComponent('SB-Mid-server-abc123')} x y`),
    ).toBe('key=[redacted] auth=Basic [redacted] url=[redacted] x y');
    s.add(['pa"ss\\word!']);
    expect(s.scrub(JSON.stringify({ m: 'got pa"ss\\word!' }))).toBe('{"m":"got [redacted]"}');
  });

  it('redacts secret-looking query parameters and credential headers', () => {
    expect(redactUrl('/a?order_id=1&password=p&serverKey=k&api%5Fkey=z&x')).toBe(
      '/a?order_id=1&password=[redacted]&serverKey=[redacted]&api%5Fkey=[redacted]&x',
    );
    expect(redactUrl('/plain')).toBe('/plain');
    expect(
      redactHeaders({ Authorization: 'Basic x', 'x-api-key': 'k', cookie: 'c', accept: '*/*', none: undefined }),
    ).toEqual({ Authorization: '[redacted]', 'x-api-key': '[redacted]', cookie: '[redacted]', accept: '*/*' });
  });
});

describe('createLogger', () => {
  it('writes JSON lines with level labels, redacts by path and by value', async () => {
    const dir = fresh();
    const log = await createLogger({ level: 'info', logDir: dir, stdout: false, secrets: ['canary-secret-1'] });
    registerLogSecrets(log, ['canary-secret-2']);
    log.info(
      {
        request: { headers: { authorization: 'Basic abc' } },
        gateway: { headers: { authorization: 'Basic def' } },
        erp: { webhook_secret: 'w' },
      },
      'one canary-secret-1',
    );
    log.warn({ detail: 'canary-secret-2' }, 'two');
    log.debug('not at info');
    await closeLogger(log);
    const [first, second, third] = read(dir)
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(first).toMatchObject({
      level: 'info',
      msg: 'one [redacted]',
      request: { headers: { authorization: '[redacted]' } },
      gateway: { headers: { authorization: '[redacted]' } },
      erp: { webhook_secret: '[redacted]' },
    });
    expect(second).toMatchObject({ level: 'warn', detail: '[redacted]' });
    expect(third).toBeUndefined();
  });

  it('redacts secret fields by name on the line, one level down, in errors and in every child binding', async () => {
    const dir = fresh();
    const log = await createLogger({ level: 'info', logDir: dir, stdout: false });
    // None of these values is known to the scrubber: only the names can catch them.
    const line = {
      password: 'v-top-password',
      headers: { authorization: 'v-top-auth', 'set-cookie': 'v-top-cookie', accept: '*/*' },
      config: { serverKey: 'v-camel', client_secret: 'v-snake', pass: 'v-pass', order_id: 'INV-1' },
      call: { headers: { 'x-api-key': 'v-api-key', cookie: 'v-cookie' }, status: 200 },
    };
    log.info(line, 'fields');
    const err = Object.assign(new TypeError('boom'), { log_pass: 'v-err-pass', code: 'E_BOOM' });
    log.error({ err }, 'error');
    log.error(err, 'error alone');
    const child = log.child({ erp: { webhook_secret: 'v-child' } }).child({ private_key: 'v-grandchild' });
    child.setBindings({ api_keys: 'v-set', order_id: 'INV-2' });
    child.info('bound');
    await closeLogger(log);
    const text = read(dir);
    expect(text).not.toMatch(/v-(top|camel|snake|pass|api-key|cookie|err-pass|child|grandchild|set)/);
    const [fields, error, alone, bound] = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(fields).toMatchObject({
      password: '[redacted]',
      headers: { authorization: '[redacted]', 'set-cookie': '[redacted]', accept: '*/*' },
      config: { serverKey: '[redacted]', client_secret: '[redacted]', pass: '[redacted]', order_id: 'INV-1' },
      call: { headers: { 'x-api-key': '[redacted]', cookie: '[redacted]' }, status: 200 },
    });
    for (const e of [error, alone])
      expect(e.err).toMatchObject({ type: 'TypeError', message: 'boom', log_pass: '[redacted]', code: 'E_BOOM' });
    expect(error.err.stack).toContain('TypeError: boom');
    expect(bound).toMatchObject({
      erp: { webhook_secret: '[redacted]' },
      private_key: '[redacted]',
      api_keys: '[redacted]',
      order_id: 'INV-2',
    });
    // The caller's objects are left as they were.
    expect(line.config.serverKey).toBe('v-camel');
    expect(line.headers.authorization).toBe('v-top-auth');
    expect(err.log_pass).toBe('v-err-pass');
  });

  it('writes every line to stdout too, buffered, none lost when the logger is closed or the process exits', async () => {
    const main = path.resolve(import.meta.dirname, '../fixtures/stdout-logger/main.ts');
    for (const how of ['close', 'exit']) {
      const dir = fresh();
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', main, dir, how], {
        cwd: path.resolve(import.meta.dirname, '../..'),
        timeout: 30_000,
      });
      const lines = stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { msg: string; i?: number; note?: string });
      expect(lines.filter((l) => l.msg === 'numbered').map((l) => l.i)).toEqual(
        Array.from({ length: 25 }, (_, i) => i),
      );
      expect(lines.at(-1)?.msg).toBe(how === 'close' ? 'after close' : 'before exit');
      expect(stdout).not.toContain('stdout-canary-secret');
      expect(lines[0]?.note).toBe('has [redacted]');
      if (how === 'close') expect(read(dir).trim().split('\n')).toHaveLength(25);
    }
  });

  it('rolls by size with pino-roll and keeps only the newest files', async () => {
    const dir = fresh();
    const log = await createLogger({ level: 'info', logDir: dir, stdout: false, maxFileSize: '1k', keepFiles: 2 });
    for (let i = 0; i < 60; i++) {
      log.info({ i, pad: 'x'.repeat(100) }, 'line');
      await flushLogger(log);
    }
    await closeLogger(log);
    await new Promise((r) => setTimeout(r, 50));
    const files = fs.readdirSync(dir).sort();
    expect(files.length).toBeGreaterThanOrEqual(2);
    expect(files.length).toBeLessThanOrEqual(3);
    for (const f of files) expect(f).toMatch(/^paylink\.\d{4}-\d{2}-\d{2}\.\d+\.log$/);
    expect(read(dir)).toContain('"i":59');
    expect(read(dir)).not.toContain('"i":0,');
  });

  it('bindLogContext puts order_id and mercant_id on the request lines, request_id included', async () => {
    const dir = fresh();
    const log = await createLogger({ level: 'info', logDir: dir, stdout: false });
    const app = Fastify({
      loggerInstance: log as FastifyBaseLogger,
      logController: new LogController({ requestIdLogLabel: 'request_id' }),
      genReqId: () => 'req-77',
    });
    app.get('/x', async (req, reply) => {
      bindLogContext(req, reply, { order_id: 'INV/1:2', mercant_id: 'INV/1' });
      req.log.info('handled');
      return {};
    });
    await app.inject({ method: 'GET', url: '/x' });
    await app.close();
    await closeLogger(log);
    const lines = read(dir)
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const handled = lines.find((l) => l.msg === 'handled');
    const completed = lines.find((l) => l.msg === 'request completed');
    expect(handled).toMatchObject({ request_id: 'req-77', order_id: 'INV/1:2', mercant_id: 'INV/1' });
    expect(completed).toMatchObject({ request_id: 'req-77', order_id: 'INV/1:2', mercant_id: 'INV/1' });
  });
});

describe('log file reading', () => {
  it('tails exact line counts, with or without a final newline', async () => {
    const dir = fresh();
    const f = path.join(dir, 'a.log');
    fs.writeFileSync(f, 'l1\nl2\nl3\n');
    expect((await tailLogFile(f, 2)).text.toString()).toBe('l2\nl3\n');
    expect((await tailLogFile(f, 5)).text.toString()).toBe('l1\nl2\nl3\n');
    fs.writeFileSync(f, 'l1\nl2\nl3');
    expect((await tailLogFile(f, 1)).text.toString()).toBe('l3\n');
    fs.writeFileSync(f, '');
    expect((await tailLogFile(f, 3)).text.toString()).toBe('');
  });

  it('pages through thousands of entries in several files with no gap and no repeat', async () => {
    const dir = fresh();
    let n = 0;
    for (let day = 1; day <= 3; day++) {
      const lines: string[] = [];
      for (let i = 0; i < 1500; i++)
        lines.push(
          JSON.stringify({
            level: i % 10 === 0 ? 'error' : 'info',
            time: new Date(Date.UTC(2026, 10, day, 0, 0, i)).toISOString(),
            n: n++,
            msg: 'x'.repeat(i % 50),
          }),
        );
      const f = path.join(dir, `paylink.2026-11-0${day}.1.log`);
      fs.writeFileSync(f, `${lines.join('\n')}\n`);
      fs.utimesSync(f, new Date(Date.UTC(2026, 10, day, 23)), new Date(Date.UTC(2026, 10, day, 23)));
    }
    const seen: number[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 20; page++) {
      const res = await queryLogs(dir, {
        limit: 1000,
        cursor: cursor === undefined ? undefined : decodeLogCursor(cursor),
      });
      seen.push(...res.entries.map((e) => Number(e.n)));
      cursor = res.next_cursor;
      if (!cursor) break;
    }
    expect(seen).toEqual(Array.from({ length: 4500 }, (_, i) => 4499 - i));
    const errors = await queryLogs(dir, { limit: 1000, level: 'error' });
    expect(errors.entries).toHaveLength(450);
    const since = await queryLogs(dir, { limit: 1000, since: new Date(Date.UTC(2026, 10, 3, 0, 24, 0)) });
    expect(since.entries.map((e) => e.n)).toEqual(Array.from({ length: 60 }, (_, i) => 4499 - i));
    expect(since.next_cursor).toBeUndefined();
  });
});
