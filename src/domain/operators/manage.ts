/** Operator management: admins add, list, change, disable and unlock operators (API, console, CLI alike). */
import type { Deps } from '../../types.js';
import { AppError } from '../../platform/errors.js';
import type { OperatorRecord, OperatorRole } from '../../model/operator.js';
import { actorName, audit, type Actor } from '../audit.js';
import { requireRole } from './access.js';
import { generatePassword, hashPassword, MIN_PASSWORD_LENGTH } from './passwords.js';
import { isUsername, USERNAME_PATTERN } from './identity.js';
import { operatorScope } from '../sign-in-throttle.js';

export type ManageDeps = Deps<'clock' | 'logger' | 'operator' | 'store'>;

/** An operator as shown to admins (never the password hash). */
export interface OperatorView {
  username: string;
  role: OperatorRole;
  accounts: string[] | null;
  disabled: boolean;
  created_at: string;
  last_sign_in_at: string | null;
  /** ISO time the latest lock of this name (from some address) ends, or null. */
  locked_until: string | null;
}

export interface AddOperatorInput {
  username: string;
  role: OperatorRole;
  accounts?: string[] | null;
  password?: string;
}

export interface ChangeOperatorInput {
  role?: OperatorRole;
  accounts?: string[] | null;
  password?: string;
  disabled?: boolean;
}

function invalid(path: string, message: string): AppError {
  return new AppError('VALIDATION_FAILED', message, { errors: [{ path, message }] });
}

function checkPassword(password: string): void {
  if ([...password].length < MIN_PASSWORD_LENGTH)
    throw invalid('/password', `must be at least ${MIN_PASSWORD_LENGTH} characters`);
}

async function view(services: ManageDeps, r: OperatorRecord): Promise<OperatorView> {
  return {
    username: r.username,
    role: r.role,
    accounts: r.accounts,
    disabled: r.disabledAt !== null,
    created_at: r.createdAt,
    last_sign_in_at: r.lastSignInAt,
    locked_until: await services.store.authFailures.lockedUntil(operatorScope(r.username), services.clock.now()),
  };
}

async function existing(services: ManageDeps, username: string): Promise<OperatorRecord> {
  const r = isUsername(username) ? await services.store.operators.get(username) : undefined;
  if (!r) throw new AppError('NOT_FOUND', `No operator named ${JSON.stringify(username.slice(0, 64))}.`);
  return r;
}

/** Whether any operator signs in by name (until one does, the console keeps to the browser's Basic dialog). */
export async function hasStoredOperators(services: Deps<'store'>): Promise<boolean> {
  return (await services.store.operators.list()).length > 0;
}

export async function listOperators(services: ManageDeps, actor: Actor): Promise<OperatorView[]> {
  requireRole(actor, 'admin');
  const all = await services.store.operators.list();
  return Promise.all(all.map((r) => view(services, r)));
}

/** Adds an operator; without a password one is generated and returned, this once. */
export async function addOperator(
  services: ManageDeps,
  actor: Actor,
  input: AddOperatorInput,
): Promise<{ operator: OperatorView; password?: string }> {
  requireRole(actor, 'admin');
  if (!isUsername(input.username)) throw invalid('/username', `must match ${USERNAME_PATTERN}`);
  if (input.password !== undefined) checkPassword(input.password);
  if (input.username === services.operator.user)
    throw new AppError('OPERATOR_EXISTS', 'That name is the operator of log_user.');
  const password = input.password ?? generatePassword();
  const op = { username: input.username, role: input.role, accounts: input.accounts ?? null };
  const inserted = await services.store.operators.insert(
    { ...op, passwordHash: await hashPassword(password) },
    services.clock.now(),
  );
  if (!inserted) throw new AppError('OPERATOR_EXISTS', `An operator named ${input.username} exists already.`);
  audit(
    services,
    { actor, action: 'operator_add', subject: input.username, outcome: 'saved' },
    `${actorName(actor)} added the operator ${input.username}`,
    { role: op.role, accounts: op.accounts },
  );
  const added = await existing(services, input.username);
  return { operator: await view(services, added), ...(input.password === undefined ? { password } : {}) };
}

/** Changes an operator; disabling or a new password ends that person's sessions at once. */
export async function changeOperator(
  services: ManageDeps,
  actor: Actor,
  username: string,
  change: ChangeOperatorInput,
): Promise<OperatorView> {
  requireRole(actor, 'admin');
  const before = await existing(services, username);
  if (change.password !== undefined) checkPassword(change.password);
  const now = services.clock.now();
  const disabledAt =
    change.disabled === undefined ? undefined : change.disabled ? (before.disabledAt ?? now.toISOString()) : null;
  // Hashed before the transaction: it takes tens of milliseconds that no lock should wait for.
  const passwordHash = change.password === undefined ? undefined : await hashPassword(change.password);
  const after = await services.store.transaction(async (tx) => {
    const r = await tx.operators.update(username, {
      role: change.role,
      accounts: change.accounts,
      passwordHash,
      disabledAt,
    });
    if (change.disabled === true || change.password !== undefined) await tx.operators.endSessionsOf(username, now);
    return r;
  });
  if (!after) throw new AppError('NOT_FOUND', `No operator named ${username}.`);
  audit(
    services,
    { actor, action: 'operator_change', subject: username, outcome: 'saved' },
    `${actorName(actor)} changed the operator ${username}`,
    {
      fields: Object.keys(change).filter((k) => change[k as keyof ChangeOperatorInput] !== undefined),
      role: after.role,
      disabled: after.disabledAt !== null,
    },
  );
  return view(services, after);
}

/** Lifts every lock of the name, from every address. */
export async function unlockOperator(
  services: ManageDeps,
  actor: Actor,
  username: string,
): Promise<OperatorView | undefined> {
  requireRole(actor, 'admin');
  const r = username === services.operator.user ? undefined : await existing(services, username);
  await services.store.authFailures.clearScope(operatorScope(username));
  audit(
    services,
    { actor, action: 'operator_unlock', subject: username, outcome: 'saved' },
    `${actorName(actor)} lifted the sign-in lock of ${username}`,
  );
  return r ? view(services, r) : undefined;
}
