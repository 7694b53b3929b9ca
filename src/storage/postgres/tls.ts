/**
 * The driver's connection options for a PostgreSQL URL, with the TLS it asks for (sslmode and
 * sslrootcert with libpq's meaning, platform/postgres-url.ts), and the check made once at opening:
 * a server that does not give what was asked stops the start with one line naming what failed.
 */
import fs from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import pg from 'pg';
import { postgresTarget, type PgSslMode } from '../../platform/postgres-url.js';

export interface PgConnection {
  connectionString: string;
  /** false: plain TCP (no sslmode, or disable). */
  ssl: ConnectionOptions | false;
  mode: PgSslMode;
  where: string;
}

export class DatabaseTlsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DatabaseTlsError';
  }
}

export function pgConnection(raw: string): PgConnection {
  const target = postgresTarget(raw);
  if (typeof target === 'string') throw new DatabaseTlsError(`DATABASE_URL ${target}`);
  const { mode, rootCert } = target.tls;
  let ca: string | undefined;
  if (rootCert !== undefined) {
    try {
      ca = fs.readFileSync(rootCert, 'utf8');
    } catch (err) {
      throw new DatabaseTlsError(
        `DATABASE_URL sslrootcert: cannot read ${rootCert} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
  }
  const base = { connectionString: target.url, mode, where: target.where };
  switch (mode) {
    case 'disable':
      return { ...base, ssl: false };
    case 'require':
      return { ...base, ssl: { rejectUnauthorized: false } };
    case 'verify-ca':
      // The chain is checked against the roots; the name in the certificate is not (verify-full does).
      return { ...base, ssl: { rejectUnauthorized: true, ca, checkServerIdentity: () => undefined } };
    case 'verify-full':
      return { ...base, ssl: { rejectUnauthorized: true, ca } };
  }
}

/**
 * One connection as the pool will make them, when TLS is asked: a server without TLS, an
 * untrusted certificate or one for another name → `DatabaseTlsError` naming the host, the mode and
 * the reason (never the user or password).
 */
export async function checkTls(c: PgConnection, timeoutMs = 5_000): Promise<void> {
  if (c.mode === 'disable') return;
  const client = new pg.Client({
    connectionString: c.connectionString,
    ssl: c.ssl,
    connectionTimeoutMillis: timeoutMs,
  });
  try {
    await client.connect();
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new DatabaseTlsError(`PostgreSQL at ${c.where} refused sslmode=${c.mode}: ${reason}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}
