import { defineConfig } from 'vitest/config';

/**
 * `npm run test:chaos`: repeated kills, pauses, outages and the OpenAPI fuzz. Kept out of
 * `npm test` (minutes, not seconds); `.ci/run` runs it after the main suite. Files run one after
 * another: each scenario already loads the 2-core machine with service processes of its own.
 */
export default defineConfig({
  test: {
    include: ['test/chaos/**/*.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 60_000,
    pool: 'forks',
    fileParallelism: false,
    reporters: ['default'],
  },
});
