/**
 * Scalar's API reference browser bundle, kept in the repository at vendor/scalar/standalone.js
 * (its origin and checksum in vendor/scalar/SOURCE; `scripts/update-scalar-bundle.sh VERSION`
 * refreshes it). Our own authenticated routes serve the bytes, so nothing is ever loaded from a CDN.
 * It is a file rather than the Fastify plugin that carries it because /docs needs the bundle only,
 * and the plugin's server-side dependencies declare Node >= 22.
 */
import fs from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';

const RELATIVE = path.join('vendor', 'scalar', 'standalone.js');

/** The bundle's path: the nearest vendor/ above this module (src/… in a checkout, dist/src/… once built). */
export function scalarBundlePath(from = import.meta.dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, RELATIVE);
    if (existsSync(candidate)) return candidate;
    if (path.dirname(dir) === dir) throw new Error(`Scalar bundle not found: ${RELATIVE} above ${from}`);
  }
}

let bundle: Promise<string> | undefined;

async function load(): Promise<string> {
  // Read on the first request for /docs, not at start: about 4 MB that a service that never shows
  // /docs should not hold.
  const text = await fs.readFile(scalarBundlePath(), 'utf8');
  if (text.length < 10_000) throw new Error('Scalar bundle is truncated');
  return text;
}

export function scalarBundle(): Promise<string> {
  bundle ??= load().catch((err: unknown) => {
    bundle = undefined;
    throw err;
  });
  return bundle;
}
