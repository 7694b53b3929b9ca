/** The service as a real child process (`node --import tsx src/server.ts`) on free loopback ports. */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

export interface ServiceProcess {
  proc: ChildProcess;
  url: string;
  /** Everything it wrote so far (stdout and stderr). */
  output(): string;
}

/**
 * Starts the service with only PATH, HOME, ports and `env`; resolves once it logs that it listens.
 * `startTimeoutMs` (default 20 s): the chaos tests allow more, on a machine loaded by their own processes.
 */
export async function startServiceProcess(
  env: Record<string, string>,
  startTimeoutMs = 20_000,
  /** Node's arguments; default `--import tsx src/server.ts` (`src/cli.ts serve` for what the command does first). */
  argv: string[] = ['--import', 'tsx', 'src/server.ts'],
): Promise<ServiceProcess> {
  const port = await freePort();
  const simPort = await freePort();
  const proc = spawn(process.execPath, argv, {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PORT: String(port),
      SIMULATOR_PORT: String(simPort),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout?.on('data', (c: Buffer) => (out += c.toString('utf8')));
  proc.stderr?.on('data', (c: Buffer) => (out += c.toString('utf8')));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`service did not start within ${startTimeoutMs} ms: ${out.slice(-2000)}`));
    }, startTimeoutMs);
    const look = () => {
      const m = /"url":"(http:\/\/127\.0\.0\.1:\d+)"[^\n]*"msg":"paylink listening/.exec(out);
      if (!m?.[1]) return;
      clearTimeout(timer);
      proc.stdout?.off('data', look);
      resolve(m[1]);
    };
    proc.stdout?.on('data', look);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`service exited (${code}): ${out.slice(-2000)}`));
    });
  });
  proc.removeAllListeners('exit');
  return { proc, url, output: () => out };
}

/** Sends `signal` and resolves with how the process ended (at once if it already has). */
export async function stopServiceProcess(
  c: ServiceProcess,
  signal: NodeJS.Signals,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (c.proc.exitCode !== null || c.proc.signalCode !== null)
    return { code: c.proc.exitCode, signal: c.proc.signalCode };
  return new Promise((resolve) => {
    c.proc.once('exit', (code, sig) => resolve({ code, signal: sig }));
    c.proc.kill(signal);
  });
}
