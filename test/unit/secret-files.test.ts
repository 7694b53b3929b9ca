import { afterEach, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, configSecretValues, loadConfig } from '../../src/config/env.js';
import { resolveSecretFiles } from '../../src/config/secret-files.js';
import { SECRET_VARIABLES } from '../../src/platform/secrets.js';
import { tempDir } from '../helpers/stores.js';

const problemsOf = (env: Record<string, string>, cwd?: string): string[] => {
  try {
    loadConfig(env, cwd);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
};

describe('secrets from files (NAME_FILE)', () => {
  let dir = '';
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, content: string) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, content, { mode: 0o600 });
    return file;
  };

  it('reads every secret variable from its file, dropping one trailing newline only', () => {
    dir = tempDir('paylink-secret-files-');
    const env: Record<string, string> = {};
    for (const name of SECRET_VARIABLES) env[`${name}_FILE`] = write(name, `value-of-${name}\n`);
    env.DATABASE_URL_FILE = write('db', 'postgres://paylink:db-password-123@db.internal:5432/paylink\n');
    env.API_KEYS_FILE = write('keys', 'key-one-0123456789, key-two-0123456789\r\n');
    env.MIDTRANS_SERVER_KEY_FILE = write('sk', 'SB-Mid-server-file\n\n');
    const { env: out, problems } = resolveSecretFiles(env);
    expect(problems).toEqual([]);
    expect(out.MIDTRANS_CLIENT_KEY).toBe('value-of-MIDTRANS_CLIENT_KEY');
    expect(out.log_pass).toBe('value-of-log_pass');
    // Only one newline is dropped: the second one is part of the value (and the schema refuses it).
    expect(out.MIDTRANS_SERVER_KEY).toBe('SB-Mid-server-file\n');
    expect(Object.keys(out).filter((k) => k.endsWith('_FILE'))).toEqual([]);

    delete env.MIDTRANS_SERVER_KEY_FILE;
    env.MIDTRANS_SERVER_KEY_FILE = write('sk2', 'SB-Mid-server-file\n');
    env.METRICS_TOKEN_FILE = write('mt', 'metrics-token-0123456789\n');
    const c = loadConfig(env, dir);
    expect(c.gateway.serverKey).toBe('SB-Mid-server-file');
    expect(c.apiKeys).toEqual(['key-one-0123456789', 'key-two-0123456789']);
    expect(c.database).toEqual({
      kind: 'postgres',
      url: 'postgres://paylink:db-password-123@db.internal:5432/paylink',
    });
    expect(c.metricsToken).toBe('metrics-token-0123456789');
    expect(c.operator.pass).toBe('value-of-log_pass');
    // The log scrubber learns every one of them, the database password on its own too.
    expect(configSecretValues(c)).toEqual(
      expect.arrayContaining([
        'SB-Mid-server-file',
        'value-of-MIDTRANS_CLIENT_KEY',
        'value-of-ERP_WEBHOOK_SECRET',
        'key-one-0123456789',
        'value-of-log_pass',
        'db-password-123',
        'metrics-token-0123456789',
      ]),
    );
  });

  it('a relative path is read from the working directory', () => {
    dir = tempDir('paylink-secret-files-');
    write('key', 'relative-api-key-0123456789\n');
    expect(loadConfig({ API_KEYS_FILE: 'key' }, dir).apiKeys).toEqual(['relative-api-key-0123456789']);
  });

  it('both set: refuses, naming the variable', () => {
    dir = tempDir('paylink-secret-files-');
    const file = write('secret', 'from-the-file-secret\n');
    const problems = problemsOf({ ERP_WEBHOOK_SECRET: 'from-the-environment', ERP_WEBHOOK_SECRET_FILE: file });
    expect(problems).toEqual(['ERP_WEBHOOK_SECRET and ERP_WEBHOOK_SECRET_FILE are both set: set one of them']);
  });

  it('an unreadable, missing, empty or oversized file: refuses naming variable and path, never the content', () => {
    dir = tempDir('paylink-secret-files-');
    const secret = 'super-secret-content-42';
    const unreadable = write('unreadable', `${secret}\n`);
    fs.chmodSync(unreadable, 0o000);
    const readable = (() => {
      try {
        fs.readFileSync(unreadable);
        return true; // root reads every file
      } catch {
        return false;
      }
    })();
    const missing = path.join(dir, 'missing');
    const empty = write('empty', '\n');
    const big = write('big', `${secret}${'x'.repeat(70_000)}`);
    const problems = problemsOf({
      API_KEYS_FILE: missing,
      log_pass_FILE: empty,
      MIDTRANS_CLIENT_KEY_FILE: big,
      ERP_WEBHOOK_SECRET_FILE: dir,
      ...(readable ? {} : { METRICS_TOKEN_FILE: unreadable }),
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        `API_KEYS_FILE: cannot read ${missing} (ENOENT)`,
        `log_pass_FILE: ${empty} is empty`,
        `MIDTRANS_CLIENT_KEY_FILE: ${big} is larger than 64 KiB: not a secret file`,
        `ERP_WEBHOOK_SECRET_FILE: ${dir} is not a regular file`,
      ]),
    );
    if (!readable) expect(problems).toContain(`METRICS_TOKEN_FILE: cannot read ${unreadable} (EACCES)`);
    expect(problems.join('\n')).not.toContain(secret);
  });

  it('an empty NAME_FILE is unset, and a non-secret variable has no _FILE form', () => {
    const c = loadConfig({ API_KEYS_FILE: '', PORT_FILE: '/nonexistent' });
    expect(c.apiKeys).toEqual([]);
    expect(c.port).toBe(3000);
  });
});
