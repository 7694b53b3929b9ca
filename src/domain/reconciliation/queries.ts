/** Reading the imports of gateway reports back: the list, and one import with its rows. */
import type { Deps } from '../../types.js';
import type { Page } from '../../model/page.js';
import type { ReconciliationImport, ReconciliationResult, ReconciliationRow } from '../../model/reconciliation.js';
import { AppError } from '../../platform/errors.js';
import type { Actor } from '../audit.js';
import { maySee } from '../operators/access.js';

export async function listReconciliations(
  services: Deps<'store'>,
  q: { limit: number; cursor?: string },
  actor: Actor,
): Promise<Page<ReconciliationImport>> {
  if (q.cursor !== undefined && !services.store.isListCursor(q.cursor))
    throw new AppError('VALIDATION_FAILED', 'The cursor is not one this list handed out.', {
      errors: [{ path: 'cursor', message: 'is not a cursor this list returned' }],
    });
  // The imports of accounts the operator may not see are left out of the page (it may come out shorter).
  const page = await services.store.reconciliation.list(q);
  return { ...page, items: page.items.filter((i) => maySee(actor, i.account)) };
}

export async function getReconciliation(
  services: Deps<'store'>,
  id: string,
  q: { result?: ReconciliationResult; limit: number; afterId?: number },
  actor: Actor,
): Promise<{ imp: ReconciliationImport; rows: ReconciliationRow[] }> {
  const imp = await services.store.reconciliation.get(id);
  if (!imp || imp.state !== 'done' || !maySee(actor, imp.account))
    throw new AppError('NOT_FOUND', `No reconciliation import ${JSON.stringify(id)}.`);
  return { imp, rows: await services.store.reconciliation.rows(id, q) };
}
