import { describe, expect, it } from 'vitest';
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { ConfigError, loadConfig, SIMULATOR_DEV_SERVER_KEY } from '../../src/config/env.js';
import type { GatewayMode } from '../../src/model/runtime-config.js';
import { defaultRuntimeConfig } from '../../src/config/runtime.js';
import { effectiveProblems } from '../../src/domain/runtime-config.js';
import { resolveOperatorCredentials } from '../../src/config/operator-credentials.js';
import { startupNotices } from '../../src/server.js';
import { STRONG, STRONG_PRODUCTION_SECRETS } from '../helpers/strong-secrets.js';
import { configProblems } from '../helpers/config.js';

describe('loadConfig', () => {
  it('embedded defaults: SQLite in ./data, simulator mode, port 3000 and simulator on 3001', () => {
    const c = loadConfig({}, '/srv/app');
    expect(c.port).toBe(3000);
    expect(c.host).toBe('127.0.0.1');
    expect(c.publicBaseUrl).toBe('http://127.0.0.1:3000');
    expect(c.database).toEqual({ kind: 'sqlite', path: path.join('/srv/app/data', 'paylink.db') });
    expect(c.logDir).toBe('/srv/app/logs');
    expect(c.gateway.mode).toBe('simulator');
    expect(c.simulatorPort).toBe(3001);
    expect(c.exposeDevApi).toBe(false);
    expect(c.apiKeys).toEqual([]);
  });

  it('selects PostgreSQL from DATABASE_URL and sandbox mode from a server key', () => {
    const c = loadConfig({
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test',
      MIDTRANS_SERVER_KEY: 'SB-Mid-server-x',
    });
    expect(c.database).toEqual({ kind: 'postgres', url: 'postgres://postgres@127.0.0.1:5432/test' });
    expect(c.gateway.mode).toBe('sandbox');
  });

  it('one line per problem, in words: an unknown mode alone; a URL that is not one without its regex', () => {
    const problemsOf = configProblems;
    expect(problemsOf({ MIDTRANS_MODE: 'foo' })).toEqual([
      'MIDTRANS_MODE must be one of: simulator, sandbox, production',
    ]);
    expect(problemsOf({ ERP_NOTIFY_URL: 'notaurl' })).toEqual(['ERP_NOTIFY_URL must be an absolute http(s) URL']);
    expect(problemsOf({ PUBLIC_BASE_URL: 'pay.example.com' })).toEqual([
      'PUBLIC_BASE_URL must be an absolute http(s) URL such as https://pay.example.com',
    ]);
    expect(problemsOf({ DATABASE_URL: 'mysql://x' })).toEqual([
      'DATABASE_URL must be a PostgreSQL URL such as postgres://user@host:5432/paylink',
    ]);
    // A known mode still asks for its key.
    expect(problemsOf({ MIDTRANS_MODE: 'sandbox' })).toEqual([
      'MIDTRANS_SERVER_KEY: a server key is required in sandbox mode',
    ]);
  });

  it('accepts lower-case and upper-case operator variables, lower-case first', () => {
    expect(loadConfig({ log_user: 'a', LOG_USER: 'b', LOG_PASS: 'p' }).operator).toEqual({ user: 'a', pass: 'p' });
  });

  it('parses flags and comma-separated keys', () => {
    const c = loadConfig({ LOG_EXPOSE_API: 'yes', API_KEYS: ' k1, ,k2 ' });
    expect(c.exposeDevApi).toBe(true);
    expect(c.apiKeys).toEqual(['k1', 'k2']);
    expect(loadConfig({ LOG_EXPOSE_API: '0' }).exposeDevApi).toBe(false);
  });

  it('rejects malformed values with every problem named, never echoing the value', () => {
    const load = () =>
      loadConfig({
        PORT: 'eighty',
        MIDTRANS_MODE: 'live',
        MIDTRANS_SERVER_KEY: 'has space secret',
        DATABASE_URL: 'mysql://x',
      });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(/PORT/);
    expect(load).toThrow(/MIDTRANS_MODE/);
    expect(load).toThrow(/DATABASE_URL/);
    expect(load).toThrow(expect.objectContaining({ message: expect.not.stringContaining('has space secret') }));
  });

  it('OUTBOX_MAX_LANES: the delivery lanes at most, a whole number from 1 to 1024; unset, the worker default', () => {
    expect(loadConfig({}).erp.maxLanes).toBeUndefined();
    expect(loadConfig({ OUTBOX_MAX_LANES: '256' }).erp.maxLanes).toBe(256);
    for (const bad of ['0', '1025', 'many', '-4', '2.5'])
      expect(() => loadConfig({ OUTBOX_MAX_LANES: bad })).toThrow(/OUTBOX_MAX_LANES/);
  });

  it('requires a server key outside simulator mode', () => {
    expect(() => loadConfig({ MIDTRANS_MODE: 'sandbox' })).toThrow(/MIDTRANS_SERVER_KEY/);
  });

  it("refuses the simulator's development key outside simulator mode, naming the variable only", () => {
    for (const env of [
      { MIDTRANS_MODE: 'sandbox', MIDTRANS_SERVER_KEY: SIMULATOR_DEV_SERVER_KEY },
      { MIDTRANS_SERVER_KEY: SIMULATOR_DEV_SERVER_KEY },
      { MIDTRANS_MODE: 'production', MIDTRANS_SERVER_KEY: SIMULATOR_DEV_SERVER_KEY },
    ]) {
      expect(() => loadConfig(env)).toThrow(
        /MIDTRANS_SERVER_KEY: the simulator's development key cannot be used in (sandbox|production) mode/,
      );
    }
    expect(loadConfig({ MIDTRANS_MODE: 'simulator', MIDTRANS_SERVER_KEY: SIMULATOR_DEV_SERVER_KEY }).gateway.mode).toBe(
      'simulator',
    );
  });

  it('an environment the start-up accepts is one /api/config accepts: one server-key rule for both', () => {
    const modes: GatewayMode[] = ['simulator', 'sandbox', 'production'];
    for (const mode of modes) {
      for (const key of [undefined, SIMULATOR_DEV_SERVER_KEY, 'SB-Mid-server-a-real-looking-key']) {
        const env = { MIDTRANS_MODE: mode, ...(key === undefined ? {} : { MIDTRANS_SERVER_KEY: key }) };
        let config;
        try {
          config = loadConfig(env);
        } catch (err) {
          expect(err, `${mode} ${String(key)}`).toBeInstanceOf(ConfigError);
          expect(String(err), `${mode} ${String(key)}`).toMatch(/MIDTRANS_SERVER_KEY/);
          continue;
        }
        const problems = effectiveProblems(defaultRuntimeConfig(config, 'http://127.0.0.1:9'), {
          production: false,
          simulatorAvailable: mode === 'simulator',
        });
        expect(
          problems.filter((p) => p.path === 'gateway.server_key'),
          `${mode} ${String(key)}`,
        ).toEqual([]);
      }
    }
  });

  it('refuses every insecure default in production', () => {
    const load = () => loadConfig({ NODE_ENV: 'production', LOG_EXPOSE_API: 'true' });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(/log_user and log_pass/);
    expect(load).toThrow(/API_KEYS/);
    expect(load).toThrow(/simulator/);
    expect(load).toThrow(/LOG_EXPOSE_API/);
  });

  it('starts in production when everything is set securely', () => {
    const c = loadConfig({
      NODE_ENV: 'production',
      log_user: 'ops',
      ...STRONG_PRODUCTION_SECRETS,
      MIDTRANS_MODE: 'production',
      MIDTRANS_SERVER_KEY: 'Mid-server-abc',
      PUBLIC_BASE_URL: 'https://pay.example.com',
      ERP_NOTIFY_URL: 'https://erp.example.com/hook',
      ERP_WEBHOOK_SECRET: STRONG.erpWebhookSecret,
      METRICS_TOKEN: STRONG.metricsToken,
    });
    expect(c.isProduction).toBe(true);
    expect(() =>
      loadConfig({
        NODE_ENV: 'production',
        log_user: 'ops',
        ...STRONG_PRODUCTION_SECRETS,
        MIDTRANS_SERVER_KEY: 'k',
        PUBLIC_BASE_URL: 'http://pay.example.com',
      }),
    ).toThrow(/https/);
  });
});

describe('weak secrets', () => {
  const PRODUCTION = {
    NODE_ENV: 'production',
    log_user: 'ops',
    ...STRONG_PRODUCTION_SECRETS,
    MIDTRANS_MODE: 'production',
    MIDTRANS_SERVER_KEY: 'Mid-server-abc',
    PUBLIC_BASE_URL: 'https://pay.example.com',
  };
  const problems = (env: Record<string, string>): string[] => {
    try {
      loadConfig(env);
      return [];
    } catch (err) {
      if (err instanceof ConfigError) return err.problems;
      throw err;
    }
  };

  it('production refuses short, repeated, and published secrets: one line each naming the variable, never the value', () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ API_KEYS: 'k1' }, 'API_KEYS is shorter than 32 characters'],
      [{ API_KEYS: 'a'.repeat(64) }, 'API_KEYS is not random'],
      [{ API_KEYS: 'CHANGE-ME-long-random-key-0123456789' }, 'API_KEYS is an example value'],
      [{ ERP_WEBHOOK_SECRET: 'whsec_abc' }, 'ERP_WEBHOOK_SECRET is shorter than 32 characters'],
      // The prefix is not key material: 26 base64 characters after it are still too few.
      [{ ERP_WEBHOOK_SECRET: `whsec_${'Zm9vYmFyYmF6cXV4'.repeat(2).slice(0, 26)}` }, 'ERP_WEBHOOK_SECRET is shorter'],
      [{ ERP_WEBHOOK_SECRET: 'whsec_Zmlyc3QtcGF5bWVudC1kZW1vLXNlY3JldA==' }, 'ERP_WEBHOOK_SECRET is an example value'],
      [{ ERP_WEBHOOK_SECRET: '0'.repeat(40) }, 'ERP_WEBHOOK_SECRET is not random'],
      [{ log_pass: 'b' }, 'log_pass is shorter than 12 characters'],
      [{ log_pass: 'x'.repeat(20) }, 'log_pass is not random'],
      [{ METRICS_TOKEN: 'm'.repeat(40) }, 'METRICS_TOKEN is not random'],
      [{ CONFIG_ENCRYPTION_KEY: 'a'.repeat(64) }, 'CONFIG_ENCRYPTION_KEY is not random'],
    ];
    for (const [change, line] of cases) {
      const found = problems({ ...PRODUCTION, ...change });
      expect(found, line).toHaveLength(1);
      expect(found[0], line).toContain(line);
      for (const value of Object.values(change)) expect(found[0]).not.toContain(value);
    }
    expect(problems({ ...PRODUCTION, ERP_WEBHOOK_SECRET: STRONG.erpWebhookSecret })).toEqual([]);
  });

  it('development starts with them, and says each one once at start-up', () => {
    const config = loadConfig({
      log_user: 'a',
      log_pass: 'b',
      API_KEYS: `k1,${STRONG.apiKey}`,
      ERP_WEBHOOK_SECRET: 'whsec_abc',
    });
    const notices = startupNotices(config, {
      operatorGenerated: false,
      operatorUser: 'a',
      erpNotifyUrl: 'http://127.0.0.1:9/erp',
      gatewayMode: 'simulator',
    }).filter((n) => /is shorter|not random|example value/.test(n.message));
    expect(notices.map((n) => [n.fields.setting, n.message])).toEqual([
      [
        'API_KEYS',
        'API_KEYS (key 1 of 2) is shorter than 32 characters: use a random key of 32 characters or more (e.g. `openssl rand -hex 32`) (production refuses to start with it)',
      ],
      [
        'ERP_WEBHOOK_SECRET',
        'ERP_WEBHOOK_SECRET is shorter than 32 characters: use a random secret of 32 characters or more (e.g. `whsec_` followed by `openssl rand -base64 24`) (production refuses to start with it)',
      ],
      [
        'log_pass',
        'log_pass is shorter than 12 characters: use a password of 12 characters or more that no one could guess (production refuses to start with it)',
      ],
    ]);
  });
});

describe('operator credentials', () => {
  it('configured ones win; otherwise generated once into DATA_DIR (0600) and reused', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paylink-op-'));
    try {
      expect(
        resolveOperatorCredentials(loadConfig({ DATA_DIR: dir, log_user: 'ops', log_pass: 'configured-pass' })),
      ).toEqual({ user: 'ops', pass: 'configured-pass', generated: false });
      expect(fs.existsSync(path.join(dir, 'operator-credentials.json'))).toBe(false);
      const first = resolveOperatorCredentials(loadConfig({ DATA_DIR: dir }));
      expect(first).toMatchObject({ user: 'operator', generated: true });
      expect(first.pass.length).toBeGreaterThanOrEqual(24);
      expect(fs.statSync(path.join(dir, 'operator-credentials.json')).mode & 0o777).toBe(0o600);
      expect(resolveOperatorCredentials(loadConfig({ DATA_DIR: dir }))).toEqual(first);
      // a configured user keeps the generated password
      expect(resolveOperatorCredentials(loadConfig({ DATA_DIR: dir, log_user: 'alice' }))).toEqual({
        user: 'alice',
        pass: first.pass,
        generated: true,
      });
      const other = fs.mkdtempSync(path.join(os.tmpdir(), 'paylink-op-'));
      expect(resolveOperatorCredentials(loadConfig({ DATA_DIR: other })).pass).not.toBe(first.pass);
      fs.rmSync(other, { recursive: true, force: true });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
