/**
 * The release version: package.json's `version`, the one place it is written. Read from the
 * nearest package.json named paylink above this module (src/ in a checkout, dist/src/ once built).
 */
import fs from 'node:fs';
import path from 'node:path';

function readVersion(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const pkg: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
      if (
        typeof pkg === 'object' &&
        pkg !== null &&
        'name' in pkg &&
        pkg.name === 'paylink' &&
        'version' in pkg &&
        typeof pkg.version === 'string'
      )
        return pkg.version;
    }
    if (path.dirname(dir) === dir) throw new Error(`no package.json of paylink above ${from}`);
  }
}

export const VERSION = readVersion(import.meta.dirname);
