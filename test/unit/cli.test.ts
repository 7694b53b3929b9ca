/** The paylink command in-process: usage and exit codes, .env reading, check-config, .env.example. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT, main, type CliIo } from '../../src/cli.js';
import { loadEnvFile } from '../../src/cli/env-file.js';
import { tempDir } from '../helpers/stores.js';
import { STRONG } from '../helpers/strong-secrets.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

function capture(): CliIo & { stdout: () => string; stderr: () => string } {
  let out = '';
  let err = '';
  return { out: (t) => (out += t), err: (t) => (err += t), stdout: () => out, stderr: () => err };
}

async function run(argv: string[], env: Record<string, string | undefined> = {}) {
  const io = capture();
  // No .env: the working directory's would make these results depend on the machine.
  const code = await main(argv, { env, io, envFile: path.join(ROOT, 'test', 'no-such.env') });
  return { code, out: io.stdout(), err: io.stderr() };
}

/** Every go-live setting, as the README's checklist names them. */
const GO_LIVE: Record<string, string> = {
  NODE_ENV: 'production',
  PUBLIC_BASE_URL: 'https://pay.example.com',
  TRUST_PROXY: 'loopback',
  MIDTRANS_MODE: 'production',
  MIDTRANS_SERVER_KEY: 'Mid-server-0123456789abcdef',
  API_KEYS: STRONG.apiKey,
  log_user: 'operator',
  log_pass: STRONG.operatorPass,
  CONFIG_ENCRYPTION_KEY: STRONG.configEncryptionKey,
  ERP_NOTIFY_URL: 'https://erp.example.com/paylink/events',
  ERP_WEBHOOK_SECRET: STRONG.erpWebhookSecret,
};

describe('paylink usage', () => {
  it('--help lists every command and the exit codes, exit 0', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(EXIT.ok);
    for (const c of ['serve', 'migrate', 'check-config', 'backup FILE', 'simulator']) expect(r.out).toContain(c);
    expect(r.out).toMatch(/Exit codes: 0 ok, 1 a problem found, 2 bad usage/);
  });

  it('each command has its own --help, exit 0, and does nothing else', async () => {
    for (const c of ['serve', 'migrate', 'check-config', 'backup', 'simulator']) {
      const r = await run([c, '--help']);
      expect(r.code, c).toBe(EXIT.ok);
      expect(r.out, c).toMatch(new RegExp(`^Usage: paylink ${c}`));
    }
  });

  it('bad usage exits 2 with the usage on stderr', async () => {
    for (const argv of [
      [],
      ['nope'],
      ['backup'],
      ['backup', 'a', 'b'],
      ['serve', 'extra'],
      ['check-config', '--bogus'],
      ['migrate', '--allow-sandbox'],
    ]) {
      const r = await run(argv);
      expect(r.code, argv.join(' ')).toBe(EXIT.usage);
      expect(r.err, argv.join(' ')).toContain('Usage: paylink');
    }
  });

  it("--version is package.json's version", async () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(pkg.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect((await run(['--version'])).out).toBe(`${pkg.version}\n`);
  });
});

describe('.env', () => {
  it('fills what the environment lacks; a variable the environment has wins; a missing file is nothing', () => {
    const dir = tempDir('paylink-env-');
    try {
      const file = path.join(dir, '.env');
      fs.writeFileSync(
        file,
        '# comment\nPORT=4000\nHOST=0.0.0.0\nAPI_KEYS="a,b"\nERP_WEBHOOK_SECRET=whsec_x # trailing comment\n',
      );
      const env: Record<string, string | undefined> = { PORT: '5000' };
      expect(loadEnvFile(file, env).sort()).toEqual(['API_KEYS', 'ERP_WEBHOOK_SECRET', 'HOST']);
      expect(env).toEqual({ PORT: '5000', HOST: '0.0.0.0', API_KEYS: 'a,b', ERP_WEBHOOK_SECRET: 'whsec_x' });
      expect(loadEnvFile(path.join(dir, 'absent.env'), env)).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('paylink check-config', () => {
  it('with every go-live setting: no problem, exit 0, and the notification URL to set in the dashboard', async () => {
    const r = await run(['check-config'], GO_LIVE);
    expect(r.out).toContain('no problem found');
    expect(r.code).toBe(EXIT.ok);
    expect(r.out).toContain('https://pay.example.com/webhook/midtrans');
  });

  it('an https PUBLIC_BASE_URL: asks to confirm the proxy keeps TLS 1.2, which the gateway notifier needs; none for http', async () => {
    const r = await run(['check-config'], GO_LIVE);
    expect(r.out).toContain('the TLS proxy in front of pay.example.com keeps TLS 1.2 enabled (not TLS 1.3 only)');
    expect(r.out).toContain('openssl s_client -connect pay.example.com:443 -tls1_2');
    expect(r.code).toBe(EXIT.ok);
    const plain = await run(['check-config'], { ...GO_LIVE, PUBLIC_BASE_URL: 'http://pay.example.com' });
    expect(plain.out).not.toContain('TLS 1.2');
  });

  it('the scrape to confirm: with METRICS_TOKEN (or its file) a bearer scrape, without it the advice to set one', async () => {
    expect((await run(['check-config'], GO_LIVE)).out).toContain(
      'set METRICS_TOKEN so the scraper needs no operator password',
    );
    const withToken = (await run(['check-config'], { ...GO_LIVE, METRICS_TOKEN: STRONG.metricsToken })).out;
    expect(withToken).toContain('GET /metrics is scraped with Authorization: Bearer METRICS_TOKEN');
    expect(withToken).not.toContain(STRONG.metricsToken);
  });

  it('with NODE_ENV=production and each go-live setting missing in turn: names it, exit 1', async () => {
    const expected: Record<string, RegExp> = {
      PUBLIC_BASE_URL: /PUBLIC_BASE_URL is required/,
      TRUST_PROXY: /TRUST_PROXY is not set/,
      MIDTRANS_MODE: /MIDTRANS_MODE is sandbox/,
      MIDTRANS_SERVER_KEY: /MIDTRANS_SERVER_KEY: a server key is required in production mode/,
      API_KEYS: /API_KEYS is required/,
      log_user: /log_user and log_pass are required/,
      log_pass: /log_user and log_pass are required/,
      CONFIG_ENCRYPTION_KEY: /CONFIG_ENCRYPTION_KEY is required/,
      ERP_NOTIFY_URL: /ERP_NOTIFY_URL is not set/,
      ERP_WEBHOOK_SECRET: /ERP_WEBHOOK_SECRET is not set/,
    };
    for (const [name, message] of Object.entries(expected)) {
      const env = { ...GO_LIVE };
      delete env[name];
      const r = await run(['check-config'], env);
      expect(r.code, name).toBe(EXIT.problem);
      expect(r.out, name).toMatch(message);
      expect(r.out, name).toMatch(/^paylink check-config: 1 problem\n/);
    }
  });

  it('refuses weak secrets, one line each naming the variable and never the value', async () => {
    const weak: Record<string, [string, RegExp]> = {
      API_KEYS: ['k1', /^ {2}- API_KEYS is shorter than 32 characters: use a random key/m],
      ERP_WEBHOOK_SECRET: ['whsec_abc', /^ {2}- ERP_WEBHOOK_SECRET is shorter than 32 characters/m],
      log_pass: ['Zq7x', /^ {2}- log_pass is shorter than 12 characters/m],
      METRICS_TOKEN: ['x'.repeat(40), /^ {2}- METRICS_TOKEN is not random/m],
      CONFIG_ENCRYPTION_KEY: ['ab'.repeat(32), /^ {2}- CONFIG_ENCRYPTION_KEY is not random/m],
    };
    for (const [name, [value, message]] of Object.entries(weak)) {
      const r = await run(['check-config'], { ...GO_LIVE, [name]: value });
      expect(r.code, name).toBe(EXIT.problem);
      expect(r.out, name).toMatch(/^paylink check-config: 1 problem\n/);
      expect(r.out, name).toMatch(message);
      expect(r.out + r.err, name).not.toContain(value);
    }
    // One repeated character is not random however long; each weak key of a list is its own line.
    const r = await run(['check-config'], { ...GO_LIVE, API_KEYS: `${'a'.repeat(40)},${STRONG.apiKey},k1` });
    expect(r.out).toMatch(/^paylink check-config: 2 problems\n/);
    expect(r.out).toContain('API_KEYS (key 1 of 3) is not random (too few distinct characters)');
    expect(r.out).toContain('API_KEYS (key 3 of 3) is shorter than 32 characters');
  });

  it('refuses the example values of .env.example, whatever their length', async () => {
    const example = fs.readFileSync(path.join(ROOT, '.env.example'), 'utf8');
    const names = ['API_KEYS', 'ERP_WEBHOOK_SECRET', 'log_pass', 'METRICS_TOKEN'];
    for (const name of names) {
      const value = new RegExp(`^# ${name}=(\\S+)$`, 'm').exec(example)?.[1];
      expect(value, name).toBeDefined();
      const r = await run(['check-config'], { ...GO_LIVE, [name]: value });
      expect(r.out, name).toContain(`${name} is an example value published in the documentation`);
      expect(r.code, name).toBe(EXIT.problem);
    }
  });

  it('with all of them missing lists each one; NODE_ENV other than production is a problem too', async () => {
    const r = await run(['check-config'], {});
    expect(r.code).toBe(EXIT.problem);
    for (const m of [
      /NODE_ENV must be production/,
      /PUBLIC_BASE_URL is required/,
      /MIDTRANS_SERVER_KEY is required/,
      /API_KEYS is required/,
      /log_user and log_pass/,
      /CONFIG_ENCRYPTION_KEY is required/,
      /ERP_NOTIFY_URL is not set/,
      /ERP_WEBHOOK_SECRET is not set/,
    ])
      expect(r.out).toMatch(m);
  });

  it('refuses what the gateway cannot reach or a sandbox key in production; --allow-sandbox accepts a staging environment', async () => {
    expect((await run(['check-config'], { ...GO_LIVE, PUBLIC_BASE_URL: 'https://10.0.0.5' })).out).toMatch(
      /loopback or private address/,
    );
    expect((await run(['check-config'], { ...GO_LIVE, MIDTRANS_SERVER_KEY: 'SB-Mid-server-abc' })).out).toMatch(
      /sandbox key/,
    );
    const staging = { ...GO_LIVE, MIDTRANS_MODE: 'sandbox', MIDTRANS_SERVER_KEY: 'SB-Mid-server-abc' };
    expect((await run(['check-config'], staging)).code).toBe(EXIT.problem);
    expect((await run(['check-config', '--allow-sandbox'], staging)).code).toBe(EXIT.ok);
  });

  it('never prints a secret value', async () => {
    const r = await run(['check-config'], {
      ...GO_LIVE,
      MIDTRANS_MODE: 'sandbox',
      CONFIG_ENCRYPTION_KEY: 'not-a-key-SECRETVALUE',
    });
    for (const v of [
      'SECRETVALUE',
      GO_LIVE.MIDTRANS_SERVER_KEY,
      GO_LIVE.log_pass,
      GO_LIVE.ERP_WEBHOOK_SECRET,
      GO_LIVE.API_KEYS,
    ])
      expect(r.out + r.err).not.toContain(v);
  });
});
