import { ConfigError, loadConfig } from '../../src/config/env.js';

/** The problems `loadConfig` refuses `env` with, one per line; none when it loads. */
export function configProblems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}
