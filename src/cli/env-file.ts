import fs from 'node:fs';
import { parseEnv } from 'node:util';

/**
 * Reads a dotenv file (Node's own parser: `NAME=value`, quotes, `#` comments) into `env`, for the
 * names `env` does not hold yet: the real environment wins over the file, so a deployment can
 * override one value without editing it. A missing file is no error. Returns the names it set.
 */
export function loadEnvFile(file: string, env: Record<string, string | undefined> = process.env): string[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const set: string[] = [];
  for (const [name, value] of Object.entries(parseEnv(text))) {
    if (env[name] !== undefined) continue;
    env[name] = value;
    set.push(name);
  }
  return set;
}
