/**
 * Reconciling one day (Jakarta) of an account's payments against the gateway's transaction
 * history, read through BI-SNAP: the day's listing becomes an import like an uploaded report's
 * (same matching, same results, same one-transaction write of the matched rows' fee and net), its
 * source the history API. One import per account and day: a second run for a day already
 * reconciled is that first import, and the gateway is not asked again. A listing the gateway
 * refuses or cuts short writes nothing.
 */
import { createHash } from 'node:crypto';
import type { Deps } from '../../types.js';
import { AppError } from '../../platform/errors.js';
import { GatewayError, toAppError } from '../../gateway/port.js';
import { jakartaDayEnd, jakartaDayStart, toJakartaIso } from '../../platform/time.js';
import { actorName, type Actor } from '../audit.js';
import { maySee, requireRole } from '../operators/access.js';
import { isCalendarDay, reportWindow } from './columns.js';
import { importReportRows, type ImportDeps, type ImportOutcome } from './import.js';

export type HistoryDeps = ImportDeps & Deps<'histories'>;

/** Who asks: an operator (finance or admin) from the API or console, or the daily schedule. */
export type HistoryRunner = Actor | 'schedule';

/** The import key of an account's day: stands where a file's SHA-256 stands, so a day is reconciled once. */
export function historyKey(account: string, day: string): string {
  return createHash('sha256').update(`transaction-history|${account}|${day}`).digest('hex');
}

/** The Jakarta day before the one `now` falls on. */
export function previousJakartaDay(now: Date): string {
  return toJakartaIso(new Date(now.getTime() - 86_400_000)).slice(0, 10);
}

/** Whether the account's day has been reconciled from the history already. */
export async function historyDone(services: Deps<'store'>, day: string): Promise<boolean> {
  return (await services.store.reconciliation.findDoneByFile(historyKey(services.store.account, day))) !== undefined;
}

export async function reconcileHistoryDay(
  services: HistoryDeps,
  req: { day: string; by: HistoryRunner },
): Promise<ImportOutcome> {
  const account = services.store.account;
  if (req.by !== 'schedule') {
    requireRole(req.by, 'finance');
    if (!maySee(req.by, account)) throw new AppError('NOT_FOUND', `No account ${account}.`);
  }
  const now = services.clock.now();
  const window = reportWindow(now);
  const last = previousJakartaDay(now);
  const bad = (message: string) =>
    new AppError('VALIDATION_FAILED', `day: ${message}.`, { errors: [{ path: 'day', message }] });
  if (!isCalendarDay(req.day)) throw bad(`${JSON.stringify(req.day.slice(0, 10))} is not a day (YYYY-MM-DD)`);
  // A day is reconciled once: only a day that is over, so its history is whole.
  if (req.day < window.from || req.day > last)
    throw bad(`${req.day} is not a past day the history covers (${window.from} to ${last}, Jakarta)`);
  const key = historyKey(account, req.day);
  const earlier = await services.store.reconciliation.findDoneByFile(key);
  if (earlier) return { created: false, import: earlier };
  const history = services.histories.for(account);
  if (!(await history.configured()))
    throw new AppError('HISTORY_NOT_CONFIGURED', `Account ${account} has no BI-SNAP credentials.`);
  const log = services.logger.child({ component: 'reconciliation', account, day: req.day });
  log.info('history reconciliation: reading the gateway history');
  let rows;
  try {
    rows = await history.list(new Date(jakartaDayStart(req.day)), new Date(jakartaDayEnd(req.day)));
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    log.warn(
      { gateway_error: err.kind, code: err.refusal?.code },
      'history reconciliation: the gateway history could not be read; nothing written',
    );
    throw toAppError(err);
  }
  log.info({ rows: rows.length }, 'history reconciliation: history read, reconciling');
  const by = req.by === 'schedule' ? 'schedule' : actorName(req.by);
  try {
    return await importReportRows(services, {
      source: 'history_api',
      createdBy: by,
      key,
      rows,
      covers: { from: req.day, to: req.day },
    });
  } catch (err) {
    // An item breaking a report's rules (a fee above its amount, a net other than amount − fee) is
    // the gateway's answer at fault, not the operator's request.
    if (!(err instanceof AppError) || err.code !== 'VALIDATION_FAILED') throw err;
    log.warn(
      { problem: err.message },
      'history reconciliation: the gateway history breaks a report rule; nothing written',
    );
    throw new AppError(
      'GATEWAY_BAD_RESPONSE',
      `The gateway's history of ${req.day} is not a valid report: ${err.message}`,
    );
  }
}
