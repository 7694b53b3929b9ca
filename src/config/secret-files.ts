/**
 * Secrets from files: every secret variable (`SECRET_VARIABLES`, platform/secrets.ts) may be given
 * as `NAME_FILE`, the path of a file holding the value, as container and Kubernetes secrets are
 * mounted. Problems name the variable and the path, never the content.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SECRET_VARIABLES } from '../platform/secrets.js';

/** A secret file larger than this is a wrong path (a log, a device), not a secret. */
const MAX_SECRET_FILE_BYTES = 64 * 1024;

export interface ResolvedSecrets {
  /** The environment with each `NAME_FILE` replaced by `NAME` = the file's content. */
  env: Record<string, string | undefined>;
  problems: string[];
}

function readSecretFile(file: string): { value: string } | { problem: string } {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (err) {
    return { problem: `cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
  }
  if (!stat.isFile()) return { problem: `${file} is not a regular file` };
  if (stat.size > MAX_SECRET_FILE_BYTES) return { problem: `${file} is larger than 64 KiB: not a secret file` };
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    return { problem: `cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
  }
  // Editors and `echo` end a file with a newline; one is dropped, anything else is the value.
  const value = text.replace(/\r?\n$/, '');
  return value === '' ? { problem: `${file} is empty` } : { value };
}

/**
 * Reads the files named by `NAME_FILE` (relative paths from `cwd`). A variable set both ways, an
 * unreadable or empty file is a problem: the process refuses to start rather than guess.
 */
export function resolveSecretFiles(env: Record<string, string | undefined>, cwd = process.cwd()): ResolvedSecrets {
  const out: Record<string, string | undefined> = { ...env };
  const problems: string[] = [];
  for (const name of SECRET_VARIABLES) {
    const fileVar = `${name}_FILE`;
    const file = env[fileVar];
    delete out[fileVar];
    if (file === undefined || file === '') continue;
    if (env[name] !== undefined && env[name] !== '') {
      problems.push(`${name} and ${fileVar} are both set: set one of them`);
      continue;
    }
    const read = readSecretFile(path.resolve(cwd, file));
    if ('problem' in read) problems.push(`${fileVar}: ${read.problem}`);
    else out[name] = read.value;
  }
  return { env: out, problems };
}
