/**
 * `paylink operators …` as a real process against the database a running app uses: what it adds
 * signs in at once, a name it disables is refused, and it lifts a lockout the app put in place.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { basicAuth, makeTestApp, OPERATOR, type TestContext } from '../helpers/services.js';

describe('paylink operators (sqlite, beside a running app)', () => {
  let t: TestContext;
  let env: Record<string, string>;
  beforeAll(async () => {
    t = await makeTestApp('sqlite', {}, { simulatorBaseUrl: 'http://127.0.0.1:9' });
    if (t.db.config.kind !== 'sqlite') throw new Error('sqlite expected');
    const dataDir = path.dirname(t.db.config.path);
    env = { DATA_DIR: dataDir, LOG_DIR: path.join(dataDir, 'logs'), log_user: OPERATOR.user, log_pass: OPERATOR.pass };
  });
  afterAll(async () => t.close());
  const me = (user: string, pass: string, ip = '10.80.0.1') =>
    t.app.inject({ url: '/api/me', headers: { authorization: basicAuth(user, pass) }, remoteAddress: ip });

  it('adds an operator with a generated password, lists, changes the role and disables', async () => {
    const added = await runCli(['operators', 'add', 'budi', '--role=finance'], { env });
    expect(added.stderr).toBe('');
    expect(added.code).toBe(0);
    const pass = /password \(shown this once\): (\S+)/.exec(added.stdout)?.[1] ?? '';
    expect(pass.length).toBeGreaterThanOrEqual(12);
    expect((await me('budi', pass)).json()).toEqual({ username: 'budi', role: 'finance', accounts: null });
    const listed = await runCli(['operators', 'list'], { env });
    expect(listed.stdout).toMatch(/^budi\tfinance\tall accounts\tenabled$/m);
    expect((await runCli(['operators', 'set-role', 'budi', 'viewer'], { env })).code).toBe(0);
    expect((await me('budi', pass)).json()).toMatchObject({ role: 'viewer' });
    expect((await runCli(['operators', 'disable', 'budi'], { env })).code).toBe(0);
    expect((await me('budi', pass)).statusCode).toBe(401);
    expect((await runCli(['operators', 'enable', 'budi'], { env })).code).toBe(0);
    expect((await me('budi', pass)).statusCode).toBe(200);
    const again = await runCli(['operators', 'add', 'budi', '--role=admin'], { env });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/exists already/);
  });

  it('lifts a lockout the app put in place', async () => {
    const added = await runCli(['operators', 'add', 'citra', '--role=viewer'], { env });
    const pass = /password \(shown this once\): (\S+)/.exec(added.stdout)?.[1] ?? '';
    for (let i = 0; i < 10; i++) expect((await me('citra', `wrong-${i}`, '10.80.0.9')).statusCode).toBe(401);
    expect((await me('citra', pass, '10.80.0.9')).statusCode).toBe(429);
    expect((await runCli(['operators', 'list'], { env })).stdout).toMatch(
      /^citra\tviewer\tall accounts\tenabled, locked until /m,
    );
    const unlocked = await runCli(['operators', 'unlock', 'citra'], { env });
    expect(unlocked.code).toBe(0);
    expect(unlocked.stdout).toBe('unlocked citra\n');
    expect((await me('citra', pass, '10.80.0.9')).statusCode).toBe(200);
  });

  it('bad usage exits 2 with the help; an unknown operator exits 1', async () => {
    const bad = await runCli(['operators', 'set-role', 'budi', 'root'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/ROLE must be one of viewer, finance, admin/);
    expect(bad.stderr).toContain('Usage: paylink operators');
    expect((await runCli(['operators', 'fly'], { env })).code).toBe(2);
    const ghost = await runCli(['operators', 'disable', 'ghost'], { env });
    expect(ghost.code).toBe(1);
    expect(ghost.stderr).toMatch(/No operator named/);
  });
});
