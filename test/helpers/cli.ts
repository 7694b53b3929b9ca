/** The paylink command as a real process from the sources (`node --import tsx src/cli.ts …`). */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';

const ROOT = path.resolve(import.meta.dirname, '../..');
const CLI = path.join(ROOT, 'src', 'cli.ts');
// Absolute, so the command also runs with another working directory (where its .env is).
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `paylink …args` with only PATH, HOME and `env`; kills it and rejects after `timeoutMs`. */
export function runCli(
  args: string[],
  o: { env?: Record<string, string>; cwd?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  const timeoutMs = o.timeoutMs ?? 30_000;
  const proc = spawn(process.execPath, ['--import', TSX, CLI, ...args], {
    cwd: o.cwd ?? ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...o.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  proc.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`paylink ${args.join(' ')} did not finish within ${timeoutMs} ms: ${stdout}${stderr}`));
    }, timeoutMs);
    proc.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
