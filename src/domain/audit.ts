/**
 * The audit log: one line for each action someone asked for, always of one shape,
 * `{ audit: { actor, action, subject, outcome }, ...detail }`, so a log search on `audit.action`
 * or `audit.actor` finds every action whoever took it and through whichever door (API or console).
 */
import type { Deps } from '../types.js';
import { currentLogContext } from '../platform/logging/context.js';
import type { OperatorRole } from '../model/operator.js';
import { DEFAULT_ACCOUNT } from '../model/account.js';

/**
 * Who asked: the ERP through an API key, an operator by name (with the role and, when limited, the
 * accounts the operator may see), someone at the host through the `paylink` command, or a client
 * not signed in (refused); with the client's address when the request came over HTTP.
 */
export type Actor = (
  | { kind: 'api'; account: string }
  | { kind: 'operator'; user: string; role: OperatorRole; accounts?: string[] }
  | { kind: 'cli' }
  | { kind: 'anonymous' }
) & { ip?: string };

/**
 * How an actor is written in the audit log and kept with refunds: `api` (the default account's
 * keys), `api:<account>`, `operator:<user>`, `cli` or `anonymous`.
 */
export function actorName(a: Actor): string {
  if (a.kind === 'api') return a.account === DEFAULT_ACCOUNT ? 'api' : `api:${a.account}`;
  return a.kind === 'operator' ? `operator:${a.user}` : a.kind;
}

export interface AuditEntry {
  actor: Actor;
  /** What was asked (`payment_refund`, `delivery_retry`, `config_change`…) or refused at the door (`auth_failed`…). */
  action: string;
  /** What it was asked of: an order id, an event id, a file name; null where there is none. */
  subject: string | null;
  /** What came of it when the line is written: `requested` (sent on to the gateway), `queued`, `saved`, `refused`, a notification result… */
  outcome: string;
}

/**
 * Writes one audit line. `detail` adds fields beside `audit` (amounts, field names, ids; never a
 * secret). Refusals at the door are warnings; actions are info.
 */
export function audit(
  services: Deps<'logger'>,
  entry: AuditEntry,
  message: string,
  detail: Record<string, unknown> = {},
  level: 'info' | 'warn' = 'info',
): void {
  // The request's id (and order), as on the request's own lines: the audit line leads to them.
  const line = {
    ...currentLogContext(),
    audit: { actor: actorName(entry.actor), action: entry.action, subject: entry.subject, outcome: entry.outcome },
    ...(entry.actor.ip === undefined ? {} : { ip: entry.actor.ip }),
    ...detail,
  };
  services.logger[level](line, message);
}
