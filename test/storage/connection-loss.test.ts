/**
 * A PostgreSQL connection lost while the store holds it between two queries (inside a database
 * transaction): the process must survive (pg emits 'error' on the client, which would otherwise
 * crash it), the transaction fails as "database unavailable", and the store works again once the
 * database is back. The database sits behind a loopback TCP proxy that cuts the connections.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { TEST_DATABASE_URL } from '../helpers/stores.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { openStore } from '../../src/storage/kysely/store.js';
import { isDatabaseUnavailable } from '../../src/platform/errors.js';
import type { Store } from '../../src/storage/contract.js';

describe.skipIf(!TEST_DATABASE_URL)('PostgreSQL connection lost between queries', () => {
  let proxy: TcpProxy | undefined;
  let store: Store | undefined;
  const schema = `t_${randomBytes(6).toString('hex')}`;
  afterEach(async () => {
    await store?.close();
    await proxy?.close();
    const c = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await c.connect();
    await c.query(`drop schema if exists ${schema} cascade`);
    await c.end();
  });

  it('does not crash the process; the transaction fails as unavailable; the store recovers', async () => {
    const target = new URL(TEST_DATABASE_URL ?? '');
    proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    target.host = `127.0.0.1:${proxy.port}`;
    store = await openStore({ kind: 'postgres', url: target.toString() }, { schema });
    const s = store;
    const p = proxy;
    const failed = await s
      .transaction(async (tx) => {
        await tx.ping();
        p.down();
        // the client sits idle inside the transaction while its connection is cut
        await new Promise((r) => setTimeout(r, 200));
        await tx.ping();
      })
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(failed).toBeDefined();
    expect(isDatabaseUnavailable(failed)).toBe(true);
    p.up();
    await expect(s.ping()).resolves.toBeUndefined();
    expect(p.dropped).toBeGreaterThan(0);
  });
});
