/** bin/build.js: dist/ is rebuilt when, and only when, the sources' content changed. */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../../bin/build.js';
import { tempDir } from '../helpers/stores.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('build when the sources changed', () => {
  let dir = '';
  beforeEach(() => {
    // A small project with the real compiler: the same tsconfig shape as paylink's.
    dir = tempDir('paylink-build-');
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    fs.writeFileSync(path.join(dir, 'package.json'), '{"name":"probe","type":"module"}');
    fs.writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          outDir: 'dist',
          rootDir: '.',
          types: [],
        },
        include: ['src'],
      }),
    );
    fs.writeFileSync(
      path.join(dir, 'tsconfig.build.json'),
      JSON.stringify({ extends: './tsconfig.json', include: ['src'] }),
    );
    fs.mkdirSync(path.join(dir, 'src'));
    fs.writeFileSync(path.join(dir, 'src', 'cli.ts'), 'export const answer: number = 1;\n');
    fs.writeFileSync(path.join(dir, 'src', 'gone.ts'), 'export const gone = true;\n');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const out = (f: string) => path.join(dir, 'dist', 'src', f);

  it('builds the first time, not again while nothing changed, again after a change, with no output of a deleted source left', () => {
    expect(ensureBuilt({ root: dir })).toBe('built');
    expect(fs.readFileSync(out('cli.js'), 'utf8')).toContain('answer = 1');
    // The bundle `paylink` runs is made from the compiled CLI.
    expect(fs.readFileSync(path.join(dir, 'dist', 'bundle', 'cli.mjs'), 'utf8')).toContain('answer = 1');
    const builtAt = fs.statSync(out('cli.js')).mtimeMs;

    expect(ensureBuilt({ root: dir })).toBe('fresh');
    expect(fs.statSync(out('cli.js')).mtimeMs).toBe(builtAt);

    // Same content written again (a checkout touches files): still fresh.
    fs.writeFileSync(path.join(dir, 'src', 'cli.ts'), 'export const answer: number = 1;\n');
    expect(ensureBuilt({ root: dir })).toBe('fresh');

    fs.writeFileSync(path.join(dir, 'src', 'cli.ts'), 'export const answer: number = 2;\n');
    fs.rmSync(path.join(dir, 'src', 'gone.ts'));
    expect(ensureBuilt({ root: dir })).toBe('built');
    expect(fs.readFileSync(out('cli.js'), 'utf8')).toContain('answer = 2');
    expect(fs.existsSync(out('gone.js'))).toBe(false);
  });

  it('rebuilds when dist/ lost its entry, and reports a failed compile', () => {
    expect(ensureBuilt({ root: dir })).toBe('built');
    fs.rmSync(out('cli.js'));
    expect(ensureBuilt({ root: dir })).toBe('built');
    fs.writeFileSync(path.join(dir, 'src', 'cli.ts'), 'export const answer: number = "text";\n');
    expect(() => ensureBuilt({ root: dir })).toThrow(/TypeScript build failed/);
  });

  it('an installation pruned of TypeScript still runs what it built; a change there is an error naming npm ci', () => {
    expect(ensureBuilt({ root: dir })).toBe('built');
    fs.rmSync(path.join(dir, 'node_modules'));
    expect(ensureBuilt({ root: dir })).toBe('fresh');
    fs.writeFileSync(path.join(dir, 'src', 'cli.ts'), 'export const answer: number = 3;\n');
    expect(() => ensureBuilt({ root: dir })).toThrow(/TypeScript is not installed \(run npm ci\)/);
  });

  it('without sources (the image ships dist/ alone) there is nothing to build', () => {
    fs.rmSync(path.join(dir, 'tsconfig.build.json'));
    expect(ensureBuilt({ root: dir })).toBe('prebuilt');
  });
});
