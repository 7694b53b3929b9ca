/** The paylink command as a process: .env in its working directory, migrate, backup's refusals. */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import SqliteDatabase from 'better-sqlite3';
import { migrations } from '../../src/storage/kysely/migrations.js';
import { runCli } from '../helpers/cli.js';
import { startServiceProcess, stopServiceProcess, type ServiceProcess } from '../helpers/child.js';
import { tempDir } from '../helpers/stores.js';
import { STRONG } from '../helpers/strong-secrets.js';

const GO_LIVE = [
  'NODE_ENV=production',
  'PUBLIC_BASE_URL=https://pay.example.com',
  'TRUST_PROXY=loopback',
  'MIDTRANS_MODE=production',
  'MIDTRANS_SERVER_KEY=Mid-server-0123456789abcdef',
  `API_KEYS=${STRONG.apiKey}`,
  'log_user=operator',
  `log_pass=${STRONG.operatorPass}`,
  `CONFIG_ENCRYPTION_KEY=${STRONG.configEncryptionKey}`,
  'ERP_NOTIFY_URL=https://erp.example.com/paylink/events',
  `ERP_WEBHOOK_SECRET=${STRONG.erpWebhookSecret}`,
].join('\n');

// Each test runs the command as a process several times (a service too): on a loaded machine that
// takes well over the default 30 s, so the slow ones allow 90.
describe('the paylink process', () => {
  const dirs: string[] = [];
  let service: ServiceProcess | undefined;
  const dir = () => {
    const d = tempDir('paylink-cli-');
    dirs.push(d);
    return d;
  };
  afterEach(async () => {
    if (service) await stopServiceProcess(service, 'SIGKILL');
    service = undefined;
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  it('reads .env from its working directory; a variable of the real environment wins over it', async () => {
    const cwd = dir();
    fs.writeFileSync(path.join(cwd, '.env'), `${GO_LIVE}\n`);
    const fromFile = await runCli(['check-config'], { cwd });
    expect(fromFile.stdout).toContain('no problem found');
    expect(fromFile.code).toBe(0);
    const overridden = await runCli(['check-config'], { cwd, env: { PUBLIC_BASE_URL: 'https://127.0.0.1' } });
    expect(overridden.code).toBe(1);
    expect(overridden.stdout).toMatch(/PUBLIC_BASE_URL names a loopback or private address/);
    const without = await runCli(['check-config'], { cwd: dir() });
    expect(without.code).toBe(1);
  });

  it('migrate creates and migrates a SQLite database, again is a no-op, and refuses a file a running service holds', async () => {
    const data = dir();
    const env = { DATA_DIR: data, LOG_DIR: path.join(data, 'logs') };
    const count = Object.keys(migrations('sqlite')).length;
    const first = await runCli(['migrate'], { env });
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const latest = Object.keys(migrations('sqlite')).sort().at(-1) ?? '';
    expect(first.stdout).toBe(
      `paylink migrate: applied ${count} migrations to the sqlite database (now at ${latest})\n`,
    );
    const db = new SqliteDatabase(path.join(data, 'paylink.db'), { readonly: true });
    expect((db.prepare('select count(*) as n from kysely_migration').get() as { n: number }).n).toBe(count);
    db.close();
    const again = await runCli(['migrate'], { env });
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(`paylink migrate: the sqlite database is already up to date (${latest})\n`);

    service = await startServiceProcess({ ...env, log_user: 'ops', log_pass: 'cli-test-operator-pass' });
    const held = await runCli(['migrate'], { env });
    expect(held.code).toBe(1);
    expect(held.stderr).toMatch(/in use by another paylink process/);
  }, 90_000);

  it('migrate with a configuration problem names it and exits 1', async () => {
    const r = await runCli(['migrate'], { env: { PORT: 'eighty' } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/PORT/);
  });

  it('backup refuses to overwrite a file, and with PostgreSQL prints the pg_dump line (no password in it) and exits 1', async () => {
    const data = dir();
    const env = { DATA_DIR: data, LOG_DIR: path.join(data, 'logs') };
    expect((await runCli(['migrate'], { env })).code).toBe(0);
    const target = path.join(data, 'taken.db');
    fs.writeFileSync(target, 'something else');
    const r = await runCli(['backup', target], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/exists: name a new file/);
    expect(fs.readFileSync(target, 'utf8')).toBe('something else');

    const nowhere = path.join(data, 'no-such-dir', 'deeper', 'x.db');
    const missing = await runCli(['backup', nowhere], { env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`the directory ${path.dirname(nowhere)} does not exist: create it first`);
    expect(fs.existsSync(path.join(data, 'no-such-dir'))).toBe(false);

    const pg = await runCli(['backup', '/backups/paylink.dump'], {
      env: { DATABASE_URL: 'postgres://paylink:s3cret-pw@db.internal:5432/paylink' },
    });
    expect(pg.code).toBe(1);
    expect(pg.stdout).toBe(
      '(umask 077 && set -C && pg_dump --format=custom --no-owner "$DATABASE_URL" > /backups/paylink.dump)\n',
    );
    expect(pg.stdout + pg.stderr).not.toContain('s3cret-pw');
  }, 90_000);
});
