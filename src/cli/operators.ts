/**
 * `paylink operators add|list|set-role|disable|unlock`: operator management from the host, for the
 * first admin, a lost password or a lockout. The same domain functions as the API and the console,
 * with the command line as the actor; audit lines go to the service's log files.
 */
import type { Config } from '../config/env.js';
import { resolveOperatorCredentials } from '../config/operator-credentials.js';
import { createLogger, closeLogger } from '../platform/logging/logger.js';
import { systemClock } from '../platform/clock.js';
import { AppError } from '../platform/errors.js';
import { lockSqliteFile, openStore, type SqliteLock } from '../storage/kysely/store.js';
import { OPERATOR_ROLES, type OperatorRole } from '../model/operator.js';
import {
  addOperator,
  changeOperator,
  listOperators,
  unlockOperator,
  type ManageDeps,
  type OperatorView,
} from '../domain/operators/manage.js';

export class OperatorsUsageError extends Error {}

export interface OperatorsCommand {
  verb: 'add' | 'list' | 'set-role' | 'disable' | 'enable' | 'unlock';
  name?: string;
  role?: OperatorRole;
  accounts?: string[];
}

const role = (r: string | undefined): OperatorRole => {
  const found = OPERATOR_ROLES.find((x) => x === r);
  if (!found) throw new OperatorsUsageError(`ROLE must be one of ${OPERATOR_ROLES.join(', ')}`);
  return found;
};

/** Parses the words after `operators`; throws `OperatorsUsageError` with what is wrong. */
export function parseOperatorsCommand(argv: readonly string[]): OperatorsCommand {
  const [verb, ...rest] = argv;
  const flags = new Map(rest.filter((a) => a.startsWith('--')).map((f) => [f.split('=')[0], f.split('=')[1] ?? '']));
  const args = rest.filter((a) => !a.startsWith('--'));
  const allowed = verb === 'add' ? ['--role', '--accounts'] : [];
  const unknown = [...flags.keys()].find((f) => f === undefined || !allowed.includes(f));
  if (unknown !== undefined) throw new OperatorsUsageError(`unknown option ${unknown}`);
  const wanted = { add: 1, list: 0, 'set-role': 2, disable: 1, enable: 1, unlock: 1 } as const;
  if (verb === undefined || !(verb in wanted))
    throw new OperatorsUsageError('expects add, list, set-role, disable, enable or unlock');
  const v = verb as keyof typeof wanted;
  if (args.length !== wanted[v]) throw new OperatorsUsageError(`${v} expects ${wanted[v]} argument(s)`);
  if (v === 'list') return { verb: v };
  if (v === 'add') {
    const accounts = flags.get('--accounts');
    return {
      verb: v,
      name: args[0],
      role: role(flags.get('--role')),
      ...(accounts ? { accounts: accounts.split(',').filter((a) => a !== '') } : {}),
    };
  }
  if (v === 'set-role') return { verb: v, name: args[0], role: role(args[1]) };
  return { verb: v, name: args[0] };
}

function line(o: OperatorView): string {
  const state = [o.disabled ? 'disabled' : 'enabled', o.locked_until ? `locked until ${o.locked_until}` : '']
    .filter((s) => s !== '')
    .join(', ');
  return `${o.username}\t${o.role}\t${o.accounts === null ? 'all accounts' : o.accounts.join(',')}\t${state}\n`;
}

async function run(services: ManageDeps, c: OperatorsCommand): Promise<string> {
  const actor = { kind: 'cli' } as const;
  const name = c.name ?? '';
  switch (c.verb) {
    case 'list': {
      const all = await listOperators(services, actor);
      return all.length === 0 ? 'no operators (only the operator of log_user)\n' : all.map(line).join('');
    }
    case 'add': {
      const added = await addOperator(services, actor, {
        username: name,
        role: c.role ?? 'viewer',
        accounts: c.accounts,
      });
      return `added ${line(added.operator)}password (shown this once): ${added.password ?? ''}\n`;
    }
    case 'set-role':
      return `changed ${line(await changeOperator(services, actor, name, { role: c.role }))}`;
    case 'disable':
    case 'enable':
      return `changed ${line(await changeOperator(services, actor, name, { disabled: c.verb === 'disable' }))}`;
    case 'unlock':
      await unlockOperator(services, actor, name);
      return `unlocked ${name}\n`;
  }
}

/** Runs one operators command against the configured database; the text to print, or an `AppError`. */
export async function operatorsCommand(config: Config, c: OperatorsCommand): Promise<string> {
  const operator = resolveOperatorCredentials(config);
  const logger = await createLogger({
    level: config.logLevel,
    logDir: config.logDir,
    stdout: false,
    secrets: [operator.pass],
  });
  const lock: SqliteLock | undefined =
    config.database.kind === 'sqlite' ? lockSqliteFile(config.database.path) : undefined;
  try {
    const store = await openStore(config.database, { logger });
    try {
      return await run({ store, logger, clock: systemClock, operator }, c);
    } finally {
      await store.close();
    }
  } finally {
    lock?.release();
    await closeLogger(logger);
  }
}

export function problemText(err: unknown): string | undefined {
  if (!(err instanceof AppError)) return undefined;
  const fields = err.extras.errors?.map((e) => ` (${e.path.replace(/^\//, '')} ${e.message})`).join('') ?? '';
  return `${err.message}${fields}`;
}
