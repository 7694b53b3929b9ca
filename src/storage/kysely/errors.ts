/**
 * The databases' own words for "a unique key exists already": the contract speaks of
 * `UniqueViolationError` only, and these driver codes stay on this side of it.
 */
import { UniqueViolationError } from '../contract.js';

/** PostgreSQL's `unique_violation`, and SQLite's unique and primary-key constraint codes. */
const UNIQUE_VIOLATION_CODES: readonly unknown[] = [
  '23505',
  'SQLITE_CONSTRAINT_UNIQUE',
  'SQLITE_CONSTRAINT_PRIMARYKEY',
];

export function isUniqueViolation(err: unknown): boolean {
  if (err instanceof UniqueViolationError) return true;
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  return UNIQUE_VIOLATION_CODES.includes(code);
}
