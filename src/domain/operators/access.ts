/**
 * Who may do what. Each action's domain function calls `requireRole` itself, so the API, the
 * console and the command line get the same answer whichever door the request came through.
 */
import { AppError } from '../../platform/errors.js';
import { OPERATOR_ROLES, type OperatorRole } from '../../model/operator.js';
import type { Actor } from '../audit.js';

const rank = (r: OperatorRole): number => OPERATOR_ROLES.indexOf(r);

/** What each role adds to the one before it, for the refusal's wording. */
const NEEDS: Record<OperatorRole, string> = {
  viewer: 'a signed-in operator',
  finance: 'the finance or admin role',
  admin: 'the admin role',
};

export function hasRole(actor: Actor, role: OperatorRole): boolean {
  // The ERP's API key and the host's command line reach only what their doors allow: the route's
  // `auth` decides for the key, the shell account for the command line.
  if (actor.kind === 'api' || actor.kind === 'cli') return true;
  return actor.kind === 'operator' && rank(actor.role) >= rank(role);
}

/** Throws the 403 `FORBIDDEN` problem unless `actor` holds `role` or a higher one. */
export function requireRole(actor: Actor, role: OperatorRole): void {
  if (!hasRole(actor, role)) throw new AppError('FORBIDDEN', `This needs ${NEEDS[role]}.`);
}

/** The accounts `actor` may see; undefined = every account (an API key is scoped by its route, not here). */
export function visibleAccounts(actor: Actor): readonly string[] | undefined {
  return actor.kind === 'operator' ? actor.accounts : undefined;
}

export function maySee(actor: Actor, account: string): boolean {
  const visible = visibleAccounts(actor);
  return visible === undefined || visible.includes(account);
}

/**
 * The accounts a list for `actor` covers: the one asked for (`account=`) within those the actor may
 * see. An account beyond them selects nothing, as an account that does not exist does.
 */
export function listedAccounts(actor: Actor, asked?: string): readonly string[] | undefined {
  const visible = visibleAccounts(actor);
  if (asked === undefined) return visible;
  return visible === undefined || visible.includes(asked) ? [asked] : [];
}
