#!/usr/bin/env node
// The `paylink` command: builds dist/ first when the sources changed (a checkout), then runs it:
// the bundle when there is one (a start reads a few chunks instead of hundreds of modules), the
// compiled sources otherwise.
import fs from 'node:fs';
import { ensureBuilt } from './build.js';

try {
  ensureBuilt();
} catch (err) {
  process.stderr.write(`paylink: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
const bundled = new URL('../dist/bundle/cli.mjs', import.meta.url);
const { main } = await import(fs.existsSync(bundled) ? bundled.href : '../dist/src/cli.js');
const code = await main(process.argv.slice(2));
if (typeof code === 'number') process.exitCode = code;
