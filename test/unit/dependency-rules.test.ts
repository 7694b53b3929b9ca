/**
 * The dependency rules of `npm run lint` (.dependency-cruiser.mjs) are real: run on a fixture with a
 * deliberate type-only import cycle, they report it and name both files; run on a test module that
 * builds services without test/helpers, they name it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cruise, type IViolation } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';

describe('dependency rules', () => {
  it('a cycle fails with a message naming its files', async () => {
    const options = await extractDepcruiseOptions('./.dependency-cruiser.mjs');
    const result = await cruise(['test/fixtures/import-cycle'], { ...options, validate: true });
    if (typeof result.output !== 'object') throw new Error('expected a JSON cruise result');
    const cycles = result.output.summary.violations.filter((v: IViolation) => v.rule.name === 'no-cycle');
    expect(cycles.length).toBeGreaterThan(0);
    const named = cycles.flatMap((v: IViolation) => [v.from, ...(v.cycle ?? []).map((c) => c.name)]);
    expect(named).toEqual(
      expect.arrayContaining(['test/fixtures/import-cycle/a.ts', 'test/fixtures/import-cycle/b.ts']),
    );
    expect(result.output.summary.error).toBeGreaterThan(0);
  });

  it('a test module outside test/helpers that imports the composition root fails, naming it', async () => {
    const options = await extractDepcruiseOptions('./.dependency-cruiser.mjs');
    const result = await cruise(['test/fixtures/composition-root'], { ...options, validate: true });
    if (typeof result.output !== 'object') throw new Error('expected a JSON cruise result');
    const found = result.output.summary.violations.filter(
      (v: IViolation) => v.rule.name === 'tests-build-services-in-helpers',
    );
    expect(found.map((v: IViolation) => `${v.from} → ${v.to}`)).toEqual([
      'test/fixtures/composition-root/builds-services.ts → src/services.ts',
    ]);
  });

  it('the rules hold for the app: no cycle and no dependency against the direction', async () => {
    const options = await extractDepcruiseOptions('./.dependency-cruiser.mjs');
    const result = await cruise(['src'], { ...options, validate: true });
    if (typeof result.output !== 'object') throw new Error('expected a JSON cruise result');
    expect(result.output.summary.violations.map((v: IViolation) => `${v.rule.name}: ${v.from} → ${v.to}`)).toEqual([]);
    expect(result.output.modules.length).toBeGreaterThan(50);
  });

  it('http/ reaches the store only through domain/: no `.store` or `{ store }` in its code (depcruise sees imports, not property access)', () => {
    const files = fs
      .readdirSync('src/http', { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .map((f) => path.join('src/http', f));
    const found: string[] = [];
    for (const file of files) {
      const code = fs
        .readFileSync(file, 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ''))
        .replace(/\/\/.*$/gm, '');
      code.split('\n').forEach((line, i) => {
        if (/\.store\b|[{,]\s*store\s*[,}:]/.test(line)) found.push(`${file}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(files.length).toBeGreaterThan(30);
    expect(found).toEqual([]);
  });
});
