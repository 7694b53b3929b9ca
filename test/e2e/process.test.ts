/**
 * The service as a process: the start-up warning for the Dev/Test endpoints, a SIGTERM that
 * drains, stops and exits 0, answering a waiting pull of the ERP feed at once, and a taken port
 * said with the variable that chose it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { tempDir } from '../helpers/stores.js';
import { freePort, startServiceProcess, stopServiceProcess, type ServiceProcess } from '../helpers/child.js';
import { runCli } from '../helpers/cli.js';

describe('the service process', () => {
  let child: ServiceProcess | undefined;
  let dir = '';
  afterEach(async () => {
    if (child) await stopServiceProcess(child, 'SIGKILL');
    child = undefined;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('warns at start-up when the Dev/Test endpoints are on, serves them, and stops cleanly on SIGTERM', async () => {
    dir = tempDir('paylink-proc-');
    child = await startServiceProcess({
      DATA_DIR: dir,
      LOG_DIR: path.join(dir, 'logs'),
      LOG_EXPOSE_API: 'true',
      log_user: 'ops',
      log_pass: 'process-test-operator-pass',
    });
    const warning = child
      .output()
      .split('\n')
      .find((l) => l.includes('LOG_EXPOSE_API is on'));
    expect(warning && JSON.parse(warning)).toMatchObject({ level: 'warn' });
    const auth = { authorization: `Basic ${Buffer.from('ops:process-test-operator-pass').toString('base64')}` };
    expect((await fetch(`${child.url}/echo`, { headers: auth })).status).toBe(200);
    expect((await fetch(`${child.url}/health`)).status).toBe(200);
    expect(await stopServiceProcess(child, 'SIGTERM')).toEqual({ code: 0, signal: null });
    expect(child.output()).toContain('shutting down: draining requests and stopping workers');
  });

  it('says nothing about Dev/Test endpoints when they are off, and they do not exist', async () => {
    dir = tempDir('paylink-proc-');
    child = await startServiceProcess({
      DATA_DIR: dir,
      LOG_DIR: path.join(dir, 'logs'),
      log_user: 'ops',
      log_pass: 'process-test-operator-pass',
    });
    expect(child.output()).not.toContain('LOG_EXPOSE_API');
    const auth = { authorization: `Basic ${Buffer.from('ops:process-test-operator-pass').toString('base64')}` };
    expect((await fetch(`${child.url}/echo`, { headers: auth })).status).toBe(404);
  });

  it('on SIGTERM a waiting pull of the ERP feed is answered at once with no events and its cursor, and the process exits 0', async () => {
    dir = tempDir('paylink-proc-');
    const key = 'process-test-erp-key-0123456789';
    child = await startServiceProcess({
      DATA_DIR: dir,
      LOG_DIR: path.join(dir, 'logs'),
      API_KEYS: key,
      log_user: 'ops',
      log_pass: 'process-test-operator-pass',
    });
    const headers = { authorization: `Bearer ${key}` };
    const start = (await (await fetch(`${child.url}/api/erp-events`, { headers })).json()) as {
      data: unknown[];
      next_cursor: string;
    };
    expect(start.data).toEqual([]);
    const waiting = fetch(`${child.url}/api/erp-events?after=${encodeURIComponent(start.next_cursor)}&wait=30`, {
      headers,
    }).then(async (res) => ({ status: res.status, body: await res.text() }));
    // Long enough for the pull to be in its 30 s wait (answers are logged only when they complete).
    await new Promise((r) => setTimeout(r, 1_000));
    const stopped = stopServiceProcess(child, 'SIGTERM');
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ data: [], next_cursor: start.next_cursor });
    // Well before the pull's own 30 s and the process's 15 s deadline (which exits 1).
    expect(await stopped).toEqual({ code: 0, signal: null });
    expect(child.output()).toContain('shutdown finished');
  }, 40_000);

  it('starts configured only through NAME_FILE secrets, and uses what the files hold', async () => {
    dir = tempDir('paylink-proc-');
    const secrets = path.join(dir, 'secrets');
    fs.mkdirSync(secrets, { mode: 0o700 });
    const file = (name: string, value: string) => {
      const p = path.join(secrets, name);
      fs.writeFileSync(p, `${value}\n`, { mode: 0o600 });
      return p;
    };
    const pass = 'file-operator-pass-0123';
    const key = 'file-api-key-0123456789abcdef';
    const serverKey = 'SB-Mid-server-from-file-0123';
    const metricsToken = 'file-metrics-token-0123456789';
    const erpSecret = `whsec_${Buffer.from('file-erp-secret-0123456789').toString('base64')}`;
    child = await startServiceProcess({
      DATA_DIR: dir,
      LOG_DIR: path.join(dir, 'logs'),
      MIDTRANS_MODE: 'simulator',
      log_user: 'ops',
      log_pass_FILE: file('log_pass', pass),
      API_KEYS_FILE: file('api_keys', key),
      MIDTRANS_SERVER_KEY_FILE: file('server_key', serverKey),
      ERP_WEBHOOK_SECRET_FILE: file('erp_secret', erpSecret),
      METRICS_TOKEN_FILE: file('metrics_token', metricsToken),
    });
    const basic = (p: string) => ({ authorization: `Basic ${Buffer.from(`ops:${p}`).toString('base64')}` });
    expect((await fetch(`${child.url}/api/config`, { headers: basic(pass) })).status).toBe(200);
    expect((await fetch(`${child.url}/api/config`, { headers: basic(`${pass}\n`) })).status).toBe(401);
    expect((await fetch(`${child.url}/api/erp-events`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(
      200,
    );
    const scrape = await fetch(`${child.url}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } });
    expect(scrape.status).toBe(200);
    expect(await scrape.text()).toContain('paylink_outbox_oldest_pending_seconds');
    // The effective configuration holds the files' values (shown masked: the last 4 characters).
    const config = (await (await fetch(`${child.url}/api/config`, { headers: basic(pass) })).json()) as {
      gateway: { server_key: string };
      erp: { webhook_secret: string };
    };
    expect(config.gateway.server_key).toBe(`****${serverKey.slice(-4)}`);
    expect(config.erp.webhook_secret).toBe(`****${erpSecret.slice(-4)}`);
    // No generated password: the configured one came from the file.
    expect(child.output()).not.toContain('password:');
    for (const secret of [pass, key, serverKey, erpSecret, metricsToken]) expect(child.output()).not.toContain(secret);
  });
});

describe('a port that is taken', () => {
  const dirs: string[] = [];
  const sockets: net.Server[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) await new Promise((r) => s.close(r));
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });
  /** A real listener on 127.0.0.1, holding its port while the service starts. */
  const hold = async (): Promise<number> => {
    const s = net.createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    sockets.push(s);
    return (s.address() as net.AddressInfo).port;
  };
  const serve = async (ports: { PORT: number; SIMULATOR_PORT: number }) => {
    const dir = tempDir('paylink-port-');
    dirs.push(dir);
    const env = { DATA_DIR: dir, LOG_DIR: path.join(dir, 'logs'), HOST: '127.0.0.1' };
    return runCli(['serve'], {
      env: { ...env, PORT: String(ports.PORT), SIMULATOR_PORT: String(ports.SIMULATOR_PORT) },
      timeoutMs: 60_000,
    });
  };

  it("names PORT and its number when the service's port is taken, and exits 1", async () => {
    const taken = await hold();
    const r = await serve({ PORT: taken, SIMULATOR_PORT: await freePort() });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `paylink: PORT ${taken} on 127.0.0.1 is already in use by another process: stop it or set PORT to a free port\n`,
    );
    expect(r.stderr).not.toContain('simulator');
  }, 70_000);

  it("names the simulator's port and SIMULATOR_PORT when that one is taken, not PORT", async () => {
    const taken = await hold();
    const port = await freePort();
    const r = await serve({ PORT: port, SIMULATOR_PORT: taken });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `paylink: the gateway simulator's port ${taken} on 127.0.0.1 is already in use by another process: stop it or set SIMULATOR_PORT to a free port (it defaults to PORT + 1)\n`,
    );
    expect(r.stderr).not.toContain(`PORT ${port}`);
  }, 70_000);

  it('names both, PORT first, when both are taken (another paylink running)', async () => {
    const port = await hold();
    const simulatorPort = await hold();
    const r = await serve({ PORT: port, SIMULATOR_PORT: simulatorPort });
    expect(r.code).toBe(1);
    const lines = r.stderr.split('\n').filter((l) => l.startsWith('paylink: '));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(new RegExp(`^paylink: PORT ${port} on 127\\.0\\.0\\.1 is already in use`));
    expect(lines[1]).toMatch(new RegExp(`^paylink: the gateway simulator's port ${simulatorPort} on 127\\.0\\.0\\.1`));
  }, 70_000);
});
