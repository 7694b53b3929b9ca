import fs from 'node:fs';
import path from 'node:path';
import pino, { type Logger } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../src/config/env.js';
import type { Services } from '../../src/types.js';
import { DATABASE_KINDS, freshDatabase, tempDir, type TestDatabase } from '../helpers/stores.js';
import { closeLogger, createLogger, flushLogger } from '../../src/platform/logging/logger.js';
import { OPERATOR, appOver, basicAuth, type AppInstance } from '../helpers/services.js';

type Instance = AppInstance;

/** One service instance over an existing database, the way a second process or a restart would see it. */
async function instance(db: TestDatabase, logger: Logger = pino({ level: 'silent' })): Promise<Instance> {
  const config: Config = {
    ...loadConfig({ PORT: '0', MIDTRANS_MODE: 'sandbox', MIDTRANS_SERVER_KEY: 'SB-Mid-server-env-key-000000' }),
    database: db.config,
  };
  const store = await db.open({ logger });
  return appOver(config, { logger, store });
}

const CHANGE = {
  erp: {
    notify_url: 'https://erp.example.com/paylink',
    webhook_secret: 'whsec_shared-by-all-instances',
    retry_for_hours: 48,
  },
  reconcile: { interval_s: 30 },
};

describe.each(DATABASE_KINDS)('runtime config across instances and restarts (%s)', (kind) => {
  let db: TestDatabase;
  const open: Instance[] = [];
  afterEach(async () => {
    for (const i of open.splice(0)) await i.close();
    await db.dispose();
  });

  async function change(i: Instance) {
    const res = await i.app.inject({
      method: 'POST',
      url: '/api/config',
      headers: { authorization: basicAuth(), 'content-type': 'application/json' },
      payload: CHANGE,
    });
    expect(res.statusCode).toBe(200);
  }
  const matches = (s: Awaited<ReturnType<Services['runtimeConfig']['current']>>) =>
    s.erp.notify_url === 'https://erp.example.com/paylink' &&
    s.erp.webhook_secret === 'whsec_shared-by-all-instances' &&
    s.erp.retry_for_hours === 48 &&
    s.reconcile.interval_s === 30;

  it('survives a restart: new services over the same database see the change', async () => {
    db = freshDatabase(kind);
    const first = await instance(db);
    await change(first);
    await first.close();
    const second = await instance(db);
    open.push(second);
    expect(matches(await second.services.runtimeConfig.current())).toBe(true);
    const doc = (
      await second.app.inject({ method: 'GET', url: '/api/config', headers: { authorization: basicAuth() } })
    ).json();
    expect(doc.erp).toMatchObject({
      notify_url: 'https://erp.example.com/paylink',
      webhook_secret: '****nces',
      retry_for_hours: 48,
    });
    expect(doc.info).toMatchObject({ config_version: 1, updated_by: OPERATOR.user });
  });

  it.runIf(kind === 'postgres')(
    'a change made on one instance is in effect on another within about a second',
    async () => {
      db = freshDatabase(kind);
      const a = await instance(db);
      const b = await instance(db);
      open.push(a, b);
      // B reads (and caches) the old document first, so the test covers cache expiry too.
      expect(matches(await b.services.runtimeConfig.current())).toBe(false);
      await change(a);
      await expect
        .poll(async () => matches(await b.services.runtimeConfig.current()), { timeout: 5_000, interval: 50 })
        .toBe(true);
      // Concurrent changes from both instances: both land (optimistic retry), none is lost.
      const post = (i: Instance, payload: unknown) =>
        i.app.inject({
          method: 'POST',
          url: '/api/config',
          headers: { authorization: basicAuth(), 'content-type': 'application/json' },
          payload: JSON.stringify(payload),
        });
      const [ra, rb] = await Promise.all([
        post(a, { links: { default_expiry_minutes: 90 } }),
        post(b, { reconcile: { pending_after_minutes: 15 } }),
      ]);
      expect([ra.statusCode, rb.statusCode]).toEqual([200, 200]);
      const stored = await a.services.runtimeConfig.overrides();
      expect(stored.document.links?.default_expiry_minutes).toBe(90);
      expect(stored.document.reconcile?.pending_after_minutes).toBe(15);
      expect(stored.version).toBe(3);
    },
  );

  it.runIf(kind === 'postgres')(
    "a secret stored through another instance is redacted from this instance's log files",
    async () => {
      db = freshDatabase(kind);
      const logDir = path.join(tempDir('paylink-multi-log-'), 'logs');
      const logger = await createLogger({ level: 'info', logDir, stdout: false, secrets: [] });
      const a = await instance(db);
      const b = await instance(db, logger);
      open.push(a, b);
      await change(a);
      // B never serves /api/config: it learns the secret only by reading the shared document.
      await expect
        .poll(async () => matches(await b.services.runtimeConfig.current()), { timeout: 5_000, interval: 50 })
        .toBe(true);
      b.services.logger.error(
        { detail: { secret: CHANGE.erp.webhook_secret } },
        `ERP refused a delivery signed with ${CHANGE.erp.webhook_secret}`,
      );
      await flushLogger(logger);
      const text = fs
        .readdirSync(logDir)
        .map((f) => fs.readFileSync(path.join(logDir, f), 'utf8'))
        .join('\n');
      expect(text).toContain('ERP refused a delivery signed with');
      expect(text).not.toContain(CHANGE.erp.webhook_secret);
      await closeLogger(logger);
    },
  );
});
