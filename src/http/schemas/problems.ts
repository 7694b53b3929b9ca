/**
 * The error answers of a route's `response` map, by status: each one a status the catalogue has
 * (platform/errors.ts), answered with the problem+json body. The OpenAPI document points each at
 * the shared response that lists the codes of that status.
 */
import { ProblemSchema, type ERRORS, type ErrorCode } from '../../platform/errors.js';

/** A status some catalogue code is answered with. */
export type ProblemStatus = (typeof ERRORS)[ErrorCode]['status'];

/** The problem+json body under each of `statuses`, for a route's `response` map. */
export function problems<const S extends ProblemStatus>(...statuses: S[]): Record<S, typeof ProblemSchema> {
  return Object.fromEntries(statuses.map((s) => [s, ProblemSchema])) as Record<S, typeof ProblemSchema>;
}
