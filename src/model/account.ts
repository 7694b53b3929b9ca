/** Accounts: one Midtrans merchant (one MID) each, with their own configuration, API keys and payments. */

/** The account the environment configures; every row of a database older than accounts belongs to it. */
export const DEFAULT_ACCOUNT = 'default';

/** Account ids: lower-case letters, digits and `-`, 1–32 characters, not starting with `-`. */
export const ACCOUNT_ID_PATTERN = '^[a-z0-9][a-z0-9-]{0,31}$';

export interface AccountRecord {
  id: string;
  name: string;
  /** The MID (`G123456789`); null when not configured. */
  merchantId: string | null;
  createdAt: string;
  /** Set once the account is disabled: its keys and notifications are refused from then on. */
  disabledAt: string | null;
}

export interface ApiKeyRecord {
  keyId: string;
  account: string;
  label: string | null;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** An API key found by its hash, with whether its account is disabled (read in the same lookup). */
export interface ApiKeyMatch extends ApiKeyRecord {
  accountDisabled: boolean;
}

/**
 * The `account` label of a per-payment metric: absent for `default`, so a service of one account
 * exposes the series it always did (scrapes and queries written before accounts keep working);
 * bounded by the accounts table otherwise.
 */
export function accountLabel(account: string): { account?: string } {
  return account === DEFAULT_ACCOUNT ? {} : { account };
}
