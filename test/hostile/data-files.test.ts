/** DATA_DIR is for the service's user alone: the directory 0700, every file in it 0600, whatever the umask. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../src/config/env.js';
import { startService, type RunningService } from '../../src/server.js';
import { resolveOperatorCredentials } from '../../src/config/operator-credentials.js';
import { resolveEncryptionKeys } from '../../src/platform/secret-box.js';
import { tempDir, TEST_DATABASE_URL } from '../helpers/stores.js';

const modeOf = (p: string) => fs.statSync(p).mode & 0o777;

/** Every entry of `dir` with its mode, as `name 0NNN`. */
function modes(dir: string): string[] {
  return fs
    .readdirSync(dir)
    .sort()
    .map((f) => `${f} 0${modeOf(path.join(dir, f)).toString(8)}`);
}

describe('data directory and files: owner only', () => {
  let root: string;
  let service: RunningService | undefined;
  let umask: number;
  beforeEach(() => {
    root = tempDir('paylink-files-');
    // The most permissive usual umask: nothing here may depend on the environment's being strict.
    umask = process.umask(0o002);
  });
  afterEach(async () => {
    await service?.stop();
    service = undefined;
    process.umask(umask);
    fs.rmSync(root, { recursive: true, force: true });
  });

  const sqliteConfig = () =>
    loadConfig({
      PORT: '0',
      DATA_DIR: path.join(root, 'data'),
      LOG_DIR: path.join(root, 'logs'),
      MIDTRANS_MODE: 'simulator',
      SIMULATOR_PORT: '0',
    });

  it('SQLite: a fresh start creates DATA_DIR 0700 with the database, its -wal and -shm, the lock, the pid, the generated credentials and key all 0600', async () => {
    const config = sqliteConfig();
    service = await startService(config, { stdoutLogs: false });
    // A write, so the WAL and shared-memory files certainly exist.
    await service.services.runtimeConfig.save({ reconcile: { interval_s: 60 } }, 0, 'test');
    const dir = config.dataDir;
    expect(modeOf(dir)).toBe(0o700);
    const names = fs.readdirSync(dir);
    expect(names).toEqual(
      expect.arrayContaining([
        'paylink.db',
        'paylink.db-wal',
        'paylink.db-shm',
        'paylink.db.lock',
        'paylink.db.pid',
        'operator-credentials.json',
        'config-encryption.key',
      ]),
    );
    expect(modes(dir).filter((m) => !m.endsWith(' 0600'))).toEqual([]);
  });

  it('SQLite: files and a directory left open by an earlier run are narrowed at the next start', async () => {
    const config = sqliteConfig();
    service = await startService(config, { stdoutLogs: false });
    await service.services.runtimeConfig.save({ reconcile: { interval_s: 60 } }, 0, 'test');
    await service.stop();
    service = undefined;
    fs.chmodSync(config.dataDir, 0o755);
    for (const f of fs.readdirSync(config.dataDir)) fs.chmodSync(path.join(config.dataDir, f), 0o644);
    service = await startService(config, { stdoutLogs: false });
    await service.services.runtimeConfig.save({ reconcile: { interval_s: 90 } }, 1, 'test');
    expect(modeOf(config.dataDir)).toBe(0o700);
    expect(modes(config.dataDir).filter((m) => !m.endsWith(' 0600'))).toEqual([]);
  });

  it.skipIf(!TEST_DATABASE_URL)(
    'PostgreSQL: DATA_DIR holds only the generated credentials and key, owner-only as well (also when left open)',
    () => {
      const config = loadConfig({
        PORT: '0',
        DATA_DIR: path.join(root, 'data'),
        DATABASE_URL: TEST_DATABASE_URL ?? '',
        MIDTRANS_MODE: 'simulator',
      });
      resolveOperatorCredentials(config);
      resolveEncryptionKeys(config);
      expect(modeOf(config.dataDir)).toBe(0o700);
      expect(modes(config.dataDir)).toEqual(['config-encryption.key 0600', 'operator-credentials.json 0600']);
      fs.chmodSync(config.dataDir, 0o775);
      for (const f of fs.readdirSync(config.dataDir)) fs.chmodSync(path.join(config.dataDir, f), 0o664);
      resolveOperatorCredentials(config);
      resolveEncryptionKeys(config);
      expect(modeOf(config.dataDir)).toBe(0o700);
      expect(modes(config.dataDir)).toEqual(['config-encryption.key 0600', 'operator-credentials.json 0600']);
    },
  );
});
