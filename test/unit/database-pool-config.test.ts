/** `DATABASE_POOL_MAX`: the PostgreSQL pool's size, judged at start-up like every other variable. */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/env.js';
import { configProblems } from '../helpers/config.js';

const URL = 'postgres://postgres@127.0.0.1:5432/test';

const problemsOf = configProblems;

describe('DATABASE_POOL_MAX', () => {
  it('unset (or empty): no size in the configuration, so the pool keeps its default', () => {
    expect(loadConfig({ DATABASE_URL: URL }).database).toEqual({ kind: 'postgres', url: URL });
    expect(loadConfig({ DATABASE_URL: URL, DATABASE_POOL_MAX: '' }).database).toEqual({ kind: 'postgres', url: URL });
  });

  it('a whole number from 1 to 200 becomes the pool size', () => {
    for (const [given, size] of [
      ['1', 1],
      ['20', 20],
      ['200', 200],
      ['007', 7],
    ] as const)
      expect(loadConfig({ DATABASE_URL: URL, DATABASE_POOL_MAX: given }).database).toEqual({
        kind: 'postgres',
        url: URL,
        poolMax: size,
      });
  });

  it('anything else refuses to start, in one line naming the variable and the range', () => {
    for (const bad of ['0', '201', '1000', '-5', '2.5', '1e2', 'ten', '0x10', '12abc'])
      expect(problemsOf({ DATABASE_URL: URL, DATABASE_POOL_MAX: bad })).toEqual([
        `DATABASE_POOL_MAX must be a whole number from 1 to 200 (got "${bad}")`,
      ]);
  });

  it('a bad value is refused with SQLite too, where it is not used', () => {
    expect(problemsOf({ DATABASE_POOL_MAX: 'lots' })).toEqual([
      'DATABASE_POOL_MAX must be a whole number from 1 to 200 (got "lots")',
    ]);
    expect(loadConfig({ DATABASE_POOL_MAX: '20' }).database.kind).toBe('sqlite');
  });

  it('a long value is shown cut short', () => {
    const [line] = problemsOf({ DATABASE_URL: URL, DATABASE_POOL_MAX: '9'.repeat(500) });
    expect(line).toBe(`DATABASE_POOL_MAX must be a whole number from 1 to 200 (got "${'9'.repeat(20)}…")`);
  });
});
