import { describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { postgresTarget } from '../../src/platform/postgres-url.js';
import { ConfigError, loadConfig } from '../../src/config/env.js';
import { pgConnection } from '../../src/storage/postgres/tls.js';
import { tempDir } from '../helpers/stores.js';

const PASSWORD = 's3cret-db-pass';

describe('DATABASE_URL: sslmode and sslrootcert with libpq meaning', () => {
  it('takes the TLS parameters out of the URL the driver gets, keeping everything else', () => {
    expect(
      postgresTarget(
        `postgres://paylink:${PASSWORD}@db.internal:6432/paylink?application_name=pl&sslmode=verify-full&sslrootcert=/etc/ca.pem`,
      ),
    ).toEqual({
      url: `postgres://paylink:${PASSWORD}@db.internal:6432/paylink?application_name=pl`,
      tls: { mode: 'verify-full', rootCert: '/etc/ca.pem' },
      where: 'db.internal:6432',
    });
    const plain = `postgres://paylink:${PASSWORD}@db/paylink`;
    expect(postgresTarget(plain)).toEqual({ url: plain, tls: { mode: 'disable' }, where: 'db:5432' });
    expect(postgresTarget('postgres://u@db/p?sslmode=require')).toMatchObject({ tls: { mode: 'require' } });
    // As libpq: require with a root certificate checks the chain.
    expect(postgresTarget('postgres://u@db/p?sslmode=require&sslrootcert=/ca.pem')).toMatchObject({
      tls: { mode: 'verify-ca', rootCert: '/ca.pem' },
    });
    expect(postgresTarget('postgres://u@db/p?sslmode=verify-ca&sslrootcert=system')).toMatchObject({
      tls: { mode: 'verify-ca' },
    });
  });

  it('refuses what would silently weaken or be ignored, without echoing the URL', () => {
    const cases: Array<[string, RegExp]> = [
      ['sslmode=prefer', /sslmode must be one of/],
      ['sslmode=allow', /sslmode must be one of/],
      ['sslmode=verify', /sslmode must be one of/],
      ['sslmode=require&sslcert=/c.pem&sslkey=/k.pem', /client certificates/],
      ['ssl=true', /not ssl or uselibpqcompat/],
      ['sslmode=verify-ca&sslrootcert=ca.pem', /absolute file path/],
      ['sslrootcert=/ca.pem', /needs sslmode/],
    ];
    for (const [q, why] of cases) {
      const p = postgresTarget(`postgres://u:${PASSWORD}@db/p?${q}`);
      expect(p, q).toMatch(why);
      expect(String(p)).not.toContain(PASSWORD);
    }
  });

  it('the driver options: require encrypts without checking, verify-ca checks the chain only, verify-full the name too', () => {
    const dir = tempDir('paylink-pgurl-');
    try {
      const ca = path.join(dir, 'ca.pem');
      fs.writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
      expect(pgConnection('postgres://u@db/p').ssl).toBe(false);
      expect(pgConnection('postgres://u@db/p?sslmode=require').ssl).toEqual({ rejectUnauthorized: false });
      const verifyCa = pgConnection(`postgres://u@db/p?sslmode=verify-ca&sslrootcert=${ca}`).ssl;
      expect(verifyCa).toMatchObject({ rejectUnauthorized: true, ca: fs.readFileSync(ca, 'utf8') });
      expect(verifyCa && verifyCa.checkServerIdentity?.('other.host', {} as never)).toBeUndefined();
      const full = pgConnection(`postgres://u@db/p?sslmode=verify-full&sslrootcert=${ca}`).ssl;
      expect(full).toMatchObject({ rejectUnauthorized: true });
      expect(full && 'checkServerIdentity' in full).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('start-up refuses a bad sslmode and an unreadable sslrootcert, naming DATABASE_URL and the path only', () => {
    const problems = (url: string): string[] => {
      try {
        loadConfig({ DATABASE_URL: url });
      } catch (err) {
        if (err instanceof ConfigError) return err.problems;
        throw err;
      }
      return [];
    };
    expect(problems(`postgres://u:${PASSWORD}@db/p?sslmode=prefer`)).toEqual([
      'DATABASE_URL sslmode must be one of disable, require, verify-ca, verify-full (prefer and allow fall back to plain text)',
    ]);
    expect(problems(`postgres://u:${PASSWORD}@db/p?sslmode=verify-ca&sslrootcert=/nonexistent/ca.pem`)).toEqual([
      'DATABASE_URL sslrootcert: cannot read /nonexistent/ca.pem (ENOENT)',
    ]);
    expect(problems(`postgres://u:${PASSWORD}@db/p?sslmode=verify-full`)).toEqual([]);
  });
});
