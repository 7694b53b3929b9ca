/**
 * Builds dist/ from the TypeScript sources when they changed since the last build, so `npm start`
 * and `paylink` start in about a second after the first time instead of compiling on every start.
 * "Changed" is a hash of the sources' contents (every file under tsconfig.build.json's `include`
 * and the tsconfig files), kept in dist/.build-hash: it does not depend on file times, which a
 * checkout, a copy or a clock can get wrong. The compiler's version is not part of it, so an
 * installation pruned of its dev dependencies (no TypeScript) still runs the dist/ it built; a
 * compiler upgrade alone is built by `npm run build`. Where there are no sources (the container
 * image ships dist/ alone) there is nothing to build.
 *
 * The compiled CLI is then bundled by esbuild into dist/bundle/ (ES modules split at the dynamic
 * imports, so what loads lazily still does): a start reads a few chunks instead of resolving,
 * reading and compiling hundreds of modules one by one. Measured on `paylink serve` (SQLite,
 * simulator mode): 2.3 s of CPU by ready unbundled, 1.25 s bundled; 134 MB idle RSS, 111 MB
 * bundled (docs/performance.md, "Start-up: one bundle"). Left outside the bundle, loaded from
 * node_modules: native modules (better-sqlite3, pg-native), pg (loaded for PostgreSQL only),
 * qrcode (on first use), OpenTelemetry's packages and import-in-the-middle (tracing hooks modules
 * by their file). Where esbuild is not installed, dist/src alone is built and `paylink` runs it.
 *
 * `node bin/build.js` builds unconditionally (npm run build).
 */
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';

const ROOT = path.resolve(import.meta.dirname, '..');
const HASH_FILE = path.join('dist', '.build-hash');
/** Packages kept out of the bundle (see above). */
const EXTERNAL = [
  'better-sqlite3',
  'pg',
  'pg-native',
  'qrcode',
  '@opentelemetry/*',
  'import-in-the-middle',
  'import-in-the-middle/*',
];

function filesUnder(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath ?? e.path, e.name));
}

/** `relative` in `dir` or the nearest directory above it that has it, as Node's resolution would find it. */
function findUp(dir, relative) {
  for (let d = dir; ; d = path.dirname(d)) {
    const candidate = path.join(d, relative);
    if (fs.existsSync(candidate)) return candidate;
    if (path.dirname(d) === d) return undefined;
  }
}

/** The hash of everything the build reads. */
export function sourceHash(root = ROOT) {
  const build = JSON.parse(fs.readFileSync(path.join(root, 'tsconfig.build.json'), 'utf8'));
  const include = Array.isArray(build.include) ? build.include : [];
  const files = [
    'tsconfig.json',
    'tsconfig.build.json',
    ...include.flatMap((d) => filesUnder(path.join(root, d)).map((f) => path.relative(root, f))),
  ]
    .filter((f) => fs.existsSync(path.join(root, f)))
    .sort();
  const hash = createHash('sha256');
  for (const f of files) {
    hash.update(`${f}\n`);
    hash.update(fs.readFileSync(path.join(root, f)));
    hash.update('\n');
  }
  return hash.digest('hex');
}

/**
 * Builds when needed. Resolves with `fresh` (dist/ matches the sources), `built`, or `prebuilt`
 * (no sources here). `force` builds even when fresh. Compiler output goes to stderr.
 */
export function ensureBuilt({ root = ROOT, force = false, entry = path.join('dist', 'src', 'cli.js') } = {}) {
  if (!fs.existsSync(path.join(root, 'tsconfig.build.json'))) return 'prebuilt';
  const hash = sourceHash(root);
  const hashFile = path.join(root, HASH_FILE);
  const previous = fs.existsSync(hashFile) ? fs.readFileSync(hashFile, 'utf8').trim() : undefined;
  if (!force && previous === hash && fs.existsSync(path.join(root, entry))) return 'fresh';
  const tsc = findUp(root, path.join('node_modules', 'typescript', 'bin', 'tsc'));
  if (tsc === undefined) throw new Error('the sources changed but TypeScript is not installed (run npm ci)');
  process.stderr.write(`paylink: ${previous === undefined ? 'building' : 'sources changed, rebuilding'} dist/ (tsc)\n`);
  // A clean build: output of a deleted source must not linger in dist/.
  fs.rmSync(path.join(root, 'dist'), { recursive: true, force: true });
  const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: ['ignore', 2, 2] });
  if (r.status !== 0) throw new Error(`the TypeScript build failed (tsc exit ${r.status ?? r.signal})`);
  bundle(root);
  fs.writeFileSync(hashFile, `${hash}\n`);
  return 'built';
}

/**
 * Bundles dist/src/cli.js into dist/bundle/ when esbuild is installed. Names are kept (`keepNames`):
 * two modules' classes of the same name would otherwise be renamed apart, and errors are told by
 * their `name`. The packages bundled that are CommonJS call `require`, which an ES module lacks:
 * each chunk makes its own from its URL.
 */
function bundle(root) {
  const compiled = path.join(root, 'dist', 'src', 'cli.js');
  const esbuildDir = findUp(root, path.join('node_modules', 'esbuild'));
  if (esbuildDir === undefined || !fs.existsSync(compiled)) {
    if (fs.existsSync(compiled)) process.stderr.write('paylink: esbuild is not installed; dist/ is not bundled\n');
    return false;
  }
  const esbuild = createRequire(import.meta.url)(esbuildDir);
  esbuild.buildSync({
    absWorkingDir: root,
    entryPoints: { cli: compiled },
    outdir: path.join(root, 'dist', 'bundle'),
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    keepNames: true,
    external: EXTERNAL,
    banner: {
      js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);",
    },
    legalComments: 'none',
    logLevel: 'error',
  });
  return true;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  try {
    ensureBuilt({ force: true });
  } catch (err) {
    process.stderr.write(`paylink: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}
