import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { basicAuth } from '../helpers/services.js';
import { makeLoggedApp, type LoggedApp } from '../helpers/operator-app.js';
import { tempDir } from '../helpers/stores.js';
import { LogFileChangedError, openLogView, resolveLogFile, tailLogFile } from '../../src/platform/logging/files.js';

const CANARY = 'CANARY-outside-the-log-dir-5b2e91';

async function text(stream: NodeJS.ReadableStream): Promise<string> {
  let out = '';
  for await (const chunk of stream) out += String(chunk);
  return out;
}

describe('log files: only the very file that was checked is read', () => {
  const dirs: string[] = [];
  let dir: string;
  let outside: string;
  afterEach(() => {
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });
  const fresh = () => {
    const root = tempDir('paylink-logswap-');
    dirs.push(root);
    dir = path.join(root, 'logs');
    fs.mkdirSync(dir);
    outside = path.join(root, 'secret.txt');
    fs.writeFileSync(outside, `${CANARY}\n`);
    fs.writeFileSync(path.join(dir, 'app.log'), '{"msg":"real"}\n');
  };

  it('a symlink swapped in after the check is not followed (O_NOFOLLOW), for view and tail', async () => {
    fresh();
    const checked = await resolveLogFile(dir, 'app.log');
    expect(checked).toBeDefined();
    if (!checked) return;
    fs.rmSync(checked.path);
    fs.symlinkSync(outside, checked.path);
    await expect(openLogView(checked)).rejects.toBeInstanceOf(LogFileChangedError);
    await expect(tailLogFile(checked, 10)).rejects.toBeInstanceOf(LogFileChangedError);
  });

  it('another regular file renamed over the checked name is refused (device and inode differ)', async () => {
    fresh();
    const checked = await resolveLogFile(dir, 'app.log');
    if (!checked) throw new Error('checked expected');
    const copy = path.join(dir, 'other.tmp');
    fs.copyFileSync(outside, copy);
    fs.renameSync(copy, checked.path);
    await expect(openLogView(checked)).rejects.toBeInstanceOf(LogFileChangedError);
    await expect(tailLogFile(checked, 10)).rejects.toBeInstanceOf(LogFileChangedError);
  });

  it('a hard link made after the check is refused (two links)', async () => {
    fresh();
    const checked = await resolveLogFile(dir, 'app.log');
    if (!checked) throw new Error('checked expected');
    fs.linkSync(checked.path, path.join(path.dirname(dir), 'elsewhere.log'));
    await expect(openLogView(checked)).rejects.toBeInstanceOf(LogFileChangedError);
  });

  it('the unchanged file is served through the checked handle', async () => {
    fresh();
    const checked = await resolveLogFile(dir, 'app.log');
    if (!checked) throw new Error('checked expected');
    expect(await text((await openLogView(checked)).stream)).toBe('{"msg":"real"}\n');
    expect((await tailLogFile(checked, 1)).text.toString()).toBe('{"msg":"real"}\n');
  });
});

describe('GET /api/logs/view and /api/logs/files: hard links are neither listed nor served', () => {
  let ctx: LoggedApp;
  const get = (url: string) => ctx.app.inject({ method: 'GET', url, headers: { authorization: basicAuth() } });
  beforeAll(async () => {
    ctx = await makeLoggedApp('sqlite');
    const secret = path.join(ctx.logDir, '..', 'outside.txt');
    fs.writeFileSync(secret, `${CANARY}\n`);
    fs.linkSync(secret, path.join(ctx.logDir, 'hard.log'));
  });
  afterAll(async () => ctx.close());

  it('view and tail of a hard-linked name → 404 without the content', async () => {
    for (const url of ['/api/logs/view?file=hard.log', '/api/logs/view?file=hard.log&tail=5']) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(404);
      expect(res.body).not.toContain(CANARY);
    }
    const files = (await get('/api/logs/files')).json().files as Array<{ name: string }>;
    expect(files.map((f) => f.name)).not.toContain('hard.log');
  });
});
