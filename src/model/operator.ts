/** Operators: one sign-in per person, with a role and, optionally, the accounts they may see. */

/** In rising order of what each may do: every role may do what the ones before it may. */
export const OPERATOR_ROLES = ['viewer', 'finance', 'admin'] as const;
export type OperatorRole = (typeof OPERATOR_ROLES)[number];

export interface OperatorRecord {
  username: string;
  role: OperatorRole;
  /** The accounts this operator may see; null = all. */
  accounts: string[] | null;
  /** `scrypt$N$r$p$salt$hash` (base64url parts); never leaves the domain. */
  passwordHash: string;
  /** ISO time the operator was disabled, or null while enabled. */
  disabledAt: string | null;
  createdAt: string;
  lastSignInAt: string | null;
}

export type NewOperator = Pick<OperatorRecord, 'username' | 'role' | 'accounts' | 'passwordHash'>;

export interface OperatorChange {
  role?: OperatorRole;
  accounts?: string[] | null;
  passwordHash?: string;
  /** An ISO time disables, null enables again. */
  disabledAt?: string | null;
}

/** A console session, found by the hash of the random id its cookie holds. */
export interface OperatorSession {
  username: string;
  createdAt: string;
  lastSeenAt: string;
  /** ISO time it was ended (sign-out, the operator disabled), or null while it may be used. */
  endedAt: string | null;
}
