/**
 * PostgreSQL over TLS against a real server: a throwaway cluster of its own (initdb as the postgres
 * OS user, a random loopback port, ssl=on with a self-signed certificate made by openssl), never
 * the machine's main cluster. sslmode=verify-ca connects and shows in pg_stat_ssl; a server that
 * does not give what was asked (no TLS, a certificate for another name, an untrusted one) stops the
 * opening, and `paylink migrate`, with one line naming what failed and never the password.
 * Skipped without the PostgreSQL binaries, unless PAYLINK_REQUIRE_PG_TLS=1.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { openStore } from '../../src/storage/kysely/store.js';
import { freePort } from '../helpers/child.js';
import { runCli } from '../helpers/cli.js';

const BIN = (() => {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return undefined;
  const versions = fs
    .readdirSync(root)
    .filter((v) => fs.existsSync(path.join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? path.join(root, versions[0], 'bin') : undefined;
})();
const canRun =
  BIN !== undefined &&
  spawnSync('id', ['-u', 'postgres']).status === 0 &&
  spawnSync('openssl', ['version']).status === 0 &&
  process.getuid?.() === 0;

it.runIf(process.env.PAYLINK_REQUIRE_PG_TLS === '1')('the PostgreSQL TLS test can run here', () => {
  expect(canRun, 'needs /usr/lib/postgresql/*/bin, openssl, the postgres user and root').toBe(true);
});

const asPostgres = (cmd: string, args: string[]) =>
  execFileSync('runuser', ['-u', 'postgres', '--', cmd, ...args], { stdio: 'pipe', timeout: 30_000 });

/** A self-signed certificate for `name` (its own CA), key and certificate in `dir`. */
function selfSigned(dir: string, base: string, name: string): { cert: string; key: string } {
  const cert = path.join(dir, `${base}.crt`);
  const key = path.join(dir, `${base}.key`);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      `/CN=${name}`,
      '-addext',
      `subjectAltName=DNS:${name}`,
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { stdio: 'pipe' },
  );
  fs.chmodSync(key, 0o600);
  return { cert, key };
}

describe.skipIf(!canRun)('PostgreSQL over TLS (a throwaway cluster)', () => {
  let dir = '';
  let data = '';
  let port = 0;
  let server: { cert: string; key: string };
  let other: { cert: string; key: string };
  const PASSWORD = 'tls-test-password-c4n4ry';
  const url = (host: string, query: string) => `postgres://postgres:${PASSWORD}@${host}:${port}/postgres?${query}`;

  beforeAll(async () => {
    const started = Date.now();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paylink-pgtls-'));
    data = path.join(dir, 'data');
    server = selfSigned(dir, 'server', 'localhost');
    other = selfSigned(dir, 'other', 'localhost');
    execFileSync('chown', ['-R', 'postgres:postgres', dir]);
    fs.chmodSync(dir, 0o755);
    asPostgres(path.join(BIN ?? '', 'initdb'), [
      '-D',
      data,
      '-U',
      'postgres',
      '--auth=trust',
      '--no-sync',
      '-E',
      'UTF8',
    ]);
    port = await freePort();
    // In the configuration file, not on the command line, so ALTER SYSTEM can turn TLS off later.
    fs.appendFileSync(
      path.join(data, 'postgresql.conf'),
      `\nssl = on\nssl_cert_file = '${server.cert}'\nssl_key_file = '${server.key}'\n`,
    );
    asPostgres(path.join(BIN ?? '', 'pg_ctl'), [
      '-D',
      data,
      '-l',
      path.join(dir, 'server.log'),
      '-w',
      '-t',
      '20',
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
      'start',
    ]);
    console.log(`PG-TLS-FIGURES cluster_ready_ms=${Date.now() - started}`);
  }, 60_000);

  afterAll(() => {
    if (data && fs.existsSync(path.join(data, 'postmaster.pid')))
      spawnSync(
        'runuser',
        ['-u', 'postgres', '--', path.join(BIN ?? '', 'pg_ctl'), '-D', data, '-m', 'immediate', 'stop'],
        {
          stdio: 'pipe',
        },
      );
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('sslmode=verify-ca with sslrootcert connects, migrates, and the connection is TLS in pg_stat_ssl', async () => {
    const store = await openStore({
      kind: 'postgres',
      url: url('127.0.0.1', `sslmode=verify-ca&sslrootcert=${encodeURIComponent(server.cert)}`),
    });
    try {
      const r = await sql<{ ssl: boolean; version: string }>`
        select ssl, version from pg_stat_ssl where pid = pg_backend_pid()`.execute(store.db);
      expect(r.rows[0]?.ssl).toBe(true);
      expect(r.rows[0]?.version).toMatch(/^TLSv1\.[23]$/);
      expect(await store.ping()).toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it('verify-full checks the name: localhost passes, 127.0.0.1 (not in the certificate) is refused', async () => {
    const ca = `sslmode=verify-full&sslrootcert=${encodeURIComponent(server.cert)}`;
    const store = await openStore({ kind: 'postgres', url: url('localhost', ca) });
    await store.close();
    const refused = await openStore({ kind: 'postgres', url: url('127.0.0.1', ca) }).then(
      () => 'opened',
      (err: Error) => err.message,
    );
    expect(refused).toMatch(
      new RegExp(`^PostgreSQL at 127\\.0\\.0\\.1:${port} refused sslmode=verify-full: .*127\\.0\\.0\\.1`),
    );
    expect(refused).not.toContain(PASSWORD);
  });

  it('a certificate that does not chain to sslrootcert is refused; require alone encrypts without checking', async () => {
    const untrusted = await openStore({
      kind: 'postgres',
      url: url('127.0.0.1', `sslmode=verify-ca&sslrootcert=${encodeURIComponent(other.cert)}`),
    }).then(
      () => 'opened',
      (err: Error) => err.message,
    );
    expect(untrusted).toMatch(/^PostgreSQL at 127\.0\.0\.1:\d+ refused sslmode=verify-ca: .*certificate/);
    const store = await openStore({ kind: 'postgres', url: url('127.0.0.1', 'sslmode=require') });
    try {
      const r = await sql<{ ssl: boolean }>`select ssl from pg_stat_ssl where pid = pg_backend_pid()`.execute(store.db);
      expect(r.rows[0]?.ssl).toBe(true);
    } finally {
      await store.close();
    }
  });

  it('a server without TLS: `paylink migrate` refuses in one line naming host and mode, never the password', async () => {
    const admin = await openStore({ kind: 'postgres', url: url('127.0.0.1', 'sslmode=require') });
    try {
      await sql`alter system set ssl = off`.execute(admin.db);
      await sql`select pg_reload_conf()`.execute(admin.db);
    } finally {
      await admin.close();
    }
    // The reload is asynchronous: wait until a new connection is plain.
    const deadline = Date.now() + 10_000;
    for (;;) {
      const err = await openStore({ kind: 'postgres', url: url('127.0.0.1', 'sslmode=require') }).then(
        async (s) => {
          await s.close();
          return undefined;
        },
        (e: Error) => e,
      );
      if (err || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const r = await runCli(['migrate'], {
      env: { DATABASE_URL: url('127.0.0.1', 'sslmode=require'), DATA_DIR: path.join(dir, 'paylink-data') },
    });
    expect(r.code, r.stderr).not.toBe(0);
    const lines = r.stderr.trim().split('\n');
    expect(lines, r.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(
        `PostgreSQL at 127\\.0\\.0\\.1:${port} refused sslmode=require: The server does not support SSL connections`,
      ),
    );
    expect(r.stdout + r.stderr).not.toContain(PASSWORD);
  }, 40_000);
});
