import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from './env.js';
import { privateDir, privateFile, writePrivateFile } from '../platform/private-files.js';

const FILE = 'operator-credentials.json';

/**
 * Operator credentials in force. Configured ones win. Outside production, missing ones are
 * generated once, kept in DATA_DIR (owner-only, see private-files.ts) and reused on every start, so they survive restarts.
 */
export function resolveOperatorCredentials(config: Config): { user: string; pass: string; generated: boolean } {
  const { user, pass } = config.operator;
  if (user && pass) return { user, pass, generated: false };
  if (config.isProduction) throw new Error('log_user and log_pass are required in production');
  const file = path.join(config.dataDir, FILE);
  privateDir(config.dataDir);
  privateFile(file);
  try {
    const saved: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    if (
      saved &&
      typeof saved === 'object' &&
      'user' in saved &&
      'pass' in saved &&
      typeof saved.user === 'string' &&
      typeof saved.pass === 'string'
    ) {
      return { user: user ?? saved.user, pass: pass ?? saved.pass, generated: true };
    }
  } catch {
    // not there yet (or unreadable): generate below
  }
  const generated = { user: user ?? 'operator', pass: pass ?? randomBytes(18).toString('base64url') };
  writePrivateFile(file, JSON.stringify(generated));
  return { ...generated, generated: true };
}
