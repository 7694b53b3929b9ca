import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const CLIENT_DIR = process.env.PAYLINK_PYTHON_CLIENT_DIR;
const SCRIPT = resolve(import.meta.dirname, '../../scripts/python-client-suite.sh');

describe.skipIf(!CLIENT_DIR)(
  "the official Python client's own test suite against the simulator (skipped unless PAYLINK_PYTHON_CLIENT_DIR names a midtrans-python-client checkout)",
  () => {
    it('every test in scope passes', { timeout: 180_000 }, async () => {
      // A failing suite exits non-zero: its output still carries the counts and the failures.
      const { stdout, code } = await run(SCRIPT, [CLIENT_DIR ?? ''], {
        timeout: 170_000,
        maxBuffer: 16 * 1024 * 1024,
      }).then(
        (r) => ({ stdout: r.stdout, code: 0 }),
        (err: { stdout?: string; code?: number }) => ({ stdout: err.stdout ?? String(err), code: err.code ?? -1 }),
      );
      const summary =
        /python-client-suite: (\d+) tests, (\d+) out of scope, (\d+) run: (\d+) passed, (\d+) failed/.exec(stdout);
      expect(summary, stdout).not.toBeNull();
      const [, , , ran, passed, failed] = (summary ?? []).map(Number);
      expect(failed, stdout).toBe(0);
      expect(passed).toBe(ran);
      expect(ran).toBeGreaterThan(0);
      expect(code, stdout).toBe(0);
    });
  },
);
