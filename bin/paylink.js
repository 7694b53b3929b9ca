#!/usr/bin/env node
// The `paylink` command: builds dist/ first when the sources changed (a checkout), then runs it.
import { ensureBuilt } from './build.js';

try {
  ensureBuilt();
} catch (err) {
  process.stderr.write(`paylink: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
const { main } = await import('../dist/src/cli.js');
const code = await main(process.argv.slice(2));
if (typeof code === 'number') process.exitCode = code;
