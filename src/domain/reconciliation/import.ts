/**
 * Importing a report exported from the gateway's dashboard, as one unit. First the whole file is
 * read as it streams in (a 64 MB file is never held whole) and every row validated, matched with
 * the payment paylink holds and staged with its result in the import's own rows, beside the
 * payments paylink holds as paid on the report's days that the report does not list; no payment
 * is touched. Then one database transaction makes the import visible and writes the fee and net of
 * its matched rows onto their payments. A file refused anywhere leaves nothing: no import, no
 * payment changed. The same file again (by the hash of its bytes) is the first import, unchanged.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Deps } from '../../types.js';
import type { TransactionRecord } from '../../model/payment.js';
import type {
  NewReconciliationRow,
  ReconciliationCounts,
  ReconciliationImport,
  ReconciliationSource,
  ReportRow,
} from '../../model/reconciliation.js';
import { AppError } from '../../platform/errors.js';
import { actorName, type Actor } from '../audit.js';
import { maySee, requireRole } from '../operators/access.js';
import { isPurchaseOf, purchaseBases } from '../../gateway/report.js';
import {
  feeAndNet,
  isCalendarDay,
  locateColumns,
  parseColumnMapping,
  readRow,
  refuseNul,
  reportWindow,
  type ColumnIndex,
  type DateWindow,
} from './columns.js';
import { readRecords, type SeparatorName } from './reader.js';
import { matchRow } from './match.js';
import { jakartaDay, jakartaDayEnd, jakartaDayStart } from '../../platform/time.js';
import { isReusableLink } from '../orders/records.js';
import { fireAlert } from '../alerts/alerts.js';

/** With `runtimeConfig`, an import with exceptions also raises `reconciliation_mismatch`. */
export type ImportDeps = Deps<'store' | 'clock' | 'logger'> & Partial<Deps<'runtimeConfig'>>;

/** Largest file taken, bytes: a month of a busy merchant's transactions is a few tens of MB. */
export const MAX_REPORT_BYTES = 64 * 1024 * 1024;
const BATCH = 500;

export interface ImportRequest {
  body: Readable;
  /** `field:Header,…` or a JSON object, for layouts other than the dashboard's. */
  columns?: string;
  /** The file's separator; by default the one its header line uses. */
  separator?: SeparatorName;
  /** The days (YYYY-MM-DD, Jakarta) the report covers, when the file's own dates should not decide. */
  from?: string;
  to?: string;
  /** Who imports: finance or admin. */
  actor: Actor;
}

export interface ImportOutcome {
  /** False: this file was imported before; `import` is that first import. */
  created: boolean;
  import: ReconciliationImport;
}

const emptyCounts = (): ReconciliationCounts => ({
  rows: 0,
  matched: 0,
  missing_here: 0,
  missing_at_gateway: 0,
  amount_mismatch: 0,
  status_mismatch: 0,
  transaction_mismatch: 0,
  chargeback: 0,
});

/** Another import of the same file finished first. */
class ImportedMeanwhile extends Error {}

export async function importGatewayReport(services: ImportDeps, req: ImportRequest): Promise<ImportOutcome> {
  requireRole(req.actor, 'finance');
  if (!maySee(req.actor, services.store.account))
    throw new AppError('NOT_FOUND', `No account ${services.store.account}.`);
  const mapping = parseColumnMapping(req.columns);
  const window = reportWindow(services.clock.now());
  const explicit = coversParam(req.from, req.to, window);
  return runImport(services, {
    source: 'file',
    createdBy: actorName(req.actor),
    window,
    covers: explicit,
    stage: (run) => run.stageAll(req.body, mapping, req.separator),
  });
}

/** Rows from another source than a file, reconciled as an import of them would be. */
export interface RowsImport {
  source: ReconciliationSource;
  createdBy: string;
  /** Stands for the source as a file's hash does: the same key again is the first import, unchanged. */
  key: string;
  rows: readonly ReportRow[];
  covers: { from: string; to: string };
}

/**
 * Rows read elsewhere (the gateway's transaction-history API), checked against the rules of a
 * report's cells (fee ≤ amount, net = amount − fee), matched, staged and written exactly as an
 * imported file's. The caller checks the operator's role and account.
 */
export async function importReportRows(services: ImportDeps, req: RowsImport): Promise<ImportOutcome> {
  const rows = req.rows.map((r) => ({ ...r, ...feeAndNet(r.amount, r.fee, r.net, r.line, (f) => f) }));
  return runImport(services, {
    source: req.source,
    createdBy: req.createdBy,
    window: reportWindow(services.clock.now()),
    covers: req.covers,
    stage: async (run) => {
      await run.stageRows(rows);
      return req.key;
    },
  });
}

/**
 * Stage every row (no payment touched), then, unless the same file or key was imported before,
 * find the payments missing at the gateway and make the import visible with its fees in one
 * transaction. Anything thrown leaves nothing of this import.
 */
async function runImport(
  services: ImportDeps,
  spec: {
    source: ReconciliationSource;
    createdBy: string;
    window: DateWindow;
    covers: { from: string; to: string } | undefined;
    stage: (run: ImportRun) => Promise<string>;
  },
): Promise<ImportOutcome> {
  const recon = services.store.reconciliation;
  const id = randomUUID();
  await recon.begin({ id, createdBy: spec.createdBy, now: services.clock.now(), source: spec.source });
  try {
    const run = new ImportRun(services, id, spec.window);
    const sha = await spec.stage(run);
    const earlier = await recon.findDoneByFile(sha);
    if (earlier) {
      await recon.discard(id);
      return { created: false, import: earlier };
    }
    await recon.learnRows();
    const covers = spec.covers ?? run.covers();
    if (covers.from !== null && covers.to !== null) await run.findMissingAtGateway(covers.from, covers.to);
    if (!(await commit(services, id, sha, run.counts, covers))) {
      await recon.discard(id);
      const first = await recon.findDoneByFile(sha);
      if (first) return { created: false, import: first };
      throw new Error('reconciliation import: finishing failed without an earlier import');
    }
    const done = await recon.get(id);
    if (!done) throw new Error('reconciliation import vanished');
    if (run.log(done) > 0 && services.runtimeConfig)
      await raiseMismatch({ ...services, runtimeConfig: services.runtimeConfig }, done);
    return { created: true, import: done };
  } catch (err) {
    await recon.discard(id).catch(() => undefined);
    throw err;
  }
}

/**
 * The import made visible with its counts, and the fee and net of its matched rows written, in one
 * transaction. False: an import of the same file finished first (nothing of this one is kept).
 */
async function commit(
  services: ImportDeps,
  id: string,
  sha: string,
  counts: ReconciliationCounts,
  covers: { from: string | null; to: string | null },
): Promise<boolean> {
  try {
    await services.store.transaction(async (tx) => {
      if (!(await tx.reconciliation.finish(id, sha, counts, covers, services.clock.now())))
        throw new ImportedMeanwhile();
      const fees = await tx.reconciliation.keepMatchedFees(id);
      if (fees.written < fees.expected)
        throw new AppError(
          'RECONCILIATION_CONFLICT',
          `${fees.expected - fees.written} of the payments the report matched changed while it was being imported (a notification or a refund arrived); nothing of the import was kept. Import the file again.`,
        );
    });
    return true;
  } catch (err) {
    if (err instanceof ImportedMeanwhile) return false;
    throw err;
  }
}

function coversParam(
  from: string | undefined,
  to: string | undefined,
  window: DateWindow,
): { from: string; to: string } | undefined {
  if (from === undefined && to === undefined) return undefined;
  const problem = (path: 'from' | 'to', message: string) =>
    new AppError('VALIDATION_FAILED', `${path}: ${message}.`, { errors: [{ path, message }] });
  if (from === undefined || to === undefined || from > to) {
    throw new AppError('VALIDATION_FAILED', 'from and to go together, as YYYY-MM-DD with from ≤ to.', {
      errors: [{ path: 'from', message: 'must be YYYY-MM-DD, with to, from ≤ to' }],
    });
  }
  for (const [path, day] of [
    ['from', from],
    ['to', to],
  ] as const) {
    if (!isCalendarDay(day))
      throw problem(path, `${JSON.stringify(day.slice(0, 10))} is not a day of the calendar (YYYY-MM-DD)`);
    if (day < window.from || day > window.to)
      throw problem(
        path,
        `${day} is outside the days a report of today can cover (${window.from} to ${window.to}, Jakarta)`,
      );
  }
  return { from, to };
}

class ImportRun {
  readonly counts = emptyCounts();
  private header: string[] = [];
  private index: ColumnIndex = {};
  private batch: ReportRow[] = [];
  private firstDay: string | null = null;
  private lastDay: string | null = null;

  constructor(
    private readonly services: ImportDeps,
    private readonly id: string,
    private readonly window: DateWindow,
  ) {}

  /** Reads, validates, matches and stages the whole file; the SHA-256 of its bytes. */
  async stageAll(
    body: Readable,
    mapping: ReturnType<typeof parseColumnMapping>,
    separator: SeparatorName | undefined,
  ): Promise<string> {
    const hash = createHash('sha256');
    for await (const rec of readRecords(body, { hash, maxBytes: MAX_REPORT_BYTES, separator })) {
      if (this.header.length === 0) {
        refuseNul(rec.cells, rec.line, rec.cells);
        this.header = rec.cells;
        this.index = locateColumns(this.header, mapping);
        continue;
      }
      this.batch.push(readRow(rec.cells, rec.line, this.index, this.header, this.window));
      if (this.batch.length >= BATCH) await this.stage();
    }
    if (this.header.length === 0)
      throw new AppError('VALIDATION_FAILED', 'The report is empty: it needs a header line and rows.', {
        errors: [{ path: 'line 1', message: 'no header line' }],
      });
    await this.stage();
    return hash.digest('hex');
  }

  /** Matches and stages rows read elsewhere, batch by batch. */
  async stageRows(rows: readonly ReportRow[]): Promise<void> {
    for (const row of rows) {
      this.batch.push(row);
      if (this.batch.length >= BATCH) await this.stage();
    }
    await this.stage();
  }

  /** The days the report's own dates cover (Jakarta). */
  covers(): { from: string | null; to: string | null } {
    return { from: this.firstDay, to: this.lastDay };
  }

  /** Matches a batch of rows and keeps them with their results in the import's rows; no payment is written. */
  private async stage(): Promise<void> {
    const rows = this.batch;
    this.batch = [];
    if (rows.length === 0) return;
    const found = await this.resolve(rows);
    const out: NewReconciliationRow[] = [];
    for (const row of rows) {
      const tx = found.get(row.orderId);
      const holder =
        row.transactionId !== null && tx?.gatewayTransactionId !== row.transactionId
          ? await this.services.store.transactions.findByGatewayTransactionId(row.transactionId)
          : undefined;
      const v = matchRow(row, tx, holder);
      const about = v.result === 'transaction_mismatch' ? (tx ?? holder) : tx;
      this.counts.rows++;
      this.counts[v.result]++;
      const day = row.settlementTime ?? row.transactionTime;
      if (day) this.noteDay(jakartaDay(day));
      out.push({
        importId: this.id,
        line: row.line,
        result: v.result,
        gatewayOrderId: row.orderId,
        orderId: about?.orderId ?? null,
        transactionRef: about?.id ?? null,
        reportStatus: row.status,
        reportAmount: row.amount,
        feeAmount: row.fee,
        netAmount: row.net,
        paylinkStatus: v.paylinkStatus,
        paylinkAmount: v.paylinkAmount,
        detail: v.detail,
        ...(v.result === 'matched' && tx ? { matchedOn: { nominal: tx.nominal, paidAmount: tx.paidAmount } } : {}),
      });
    }
    await this.services.store.reconciliation.addRows(out);
    if (this.counts.rows % 10_000 < rows.length)
      this.services.logger.info(
        { reconciliation_import: this.id, rows: this.counts.rows },
        'reconciliation import: rows read',
      );
  }

  private noteDay(day: string): void {
    if (this.firstDay === null || day < this.firstDay) this.firstDay = day;
    if (this.lastDay === null || day > this.lastDay) this.lastDay = day;
  }

  /** The payment each row's order id names: by the gateway order id, or a payment link's purchase. */
  private async resolve(rows: ReportRow[]): Promise<Map<string, TransactionRecord>> {
    const t = this.services.store.transactions;
    const ids = [...new Set(rows.map((r) => r.orderId))];
    const byId = new Map((await t.findManyByGatewayOrderIds(ids)).map((x) => [x.gatewayOrderId, x]));
    const bases = new Map<string, string>();
    for (const id of ids.filter((i) => !byId.has(i))) for (const base of purchaseBases(id)) bases.set(base, id);
    if (bases.size > 0)
      for (const link of await t.findManyByGatewayOrderIds([...bases.keys()]))
        if (link.kind === 'payment_link' && !isReusableLink(link))
          for (const id of ids) if (!byId.has(id) && isPurchaseOf(id, link.gatewayOrderId)) byId.set(id, link);
    return byId;
  }

  /** Payments paylink holds as paid on the report's days that no row matched. */
  async findMissingAtGateway(fromDay: string, toDay: string): Promise<void> {
    let after = '';
    for (;;) {
      const page = await this.services.store.reconciliation.missingAtGateway(
        this.id,
        jakartaDayStart(fromDay),
        jakartaDayEnd(toDay),
        after,
        BATCH,
      );
      if (page.length === 0) return;
      this.counts.missing_at_gateway += page.length;
      await this.services.store.reconciliation.addRows(
        page.map((tx) => ({
          importId: this.id,
          line: null,
          result: 'missing_at_gateway',
          gatewayOrderId: tx.gatewayOrderId,
          orderId: tx.orderId,
          transactionRef: tx.id,
          reportStatus: null,
          reportAmount: null,
          feeAmount: null,
          netAmount: null,
          paylinkStatus: tx.status,
          paylinkAmount: tx.paidAmount ?? tx.nominal,
          detail: `paylink holds it as ${tx.status}; the report, covering ${fromDay} to ${toDay}, does not list it`,
        })),
      );
      after = page.at(-1)?.id ?? after;
    }
  }

  /** Logs the outcome; answers how many rows are exceptions. */
  log(done: ReconciliationImport): number {
    const exceptions =
      done.missing_here +
      done.missing_at_gateway +
      done.amount_mismatch +
      done.status_mismatch +
      done.transaction_mismatch +
      done.chargeback;
    const line = {
      reconciliation_import: done.id,
      rows: done.rows,
      matched: done.matched,
      missing_here: done.missing_here,
      missing_at_gateway: done.missing_at_gateway,
      amount_mismatch: done.amount_mismatch,
      status_mismatch: done.status_mismatch,
      transaction_mismatch: done.transaction_mismatch,
      chargeback: done.chargeback,
    };
    if (exceptions > 0)
      this.services.logger.warn(
        { ...line, alert: 'reconciliation_mismatch' },
        'reconciliation import: the gateway report and paylink differ',
      );
    else this.services.logger.info(line, 'reconciliation import: every row matched');
    return exceptions;
  }
}

/** `reconciliation_mismatch` for an import with exceptions (each import is its own subject; never resolved by itself). */
async function raiseMismatch(
  services: Deps<'store' | 'clock' | 'logger' | 'runtimeConfig'>,
  done: ReconciliationImport,
): Promise<void> {
  await fireAlert(services, services.store.account, {
    alert: 'reconciliation_mismatch',
    subject: done.id,
    summary: `A gateway report import differs from paylink: ${done.missing_here} missing here, ${done.missing_at_gateway} missing at the gateway, ${done.amount_mismatch} amount, ${done.status_mismatch} status, ${done.transaction_mismatch} transaction mismatches`,
    details: {
      import_id: done.id,
      rows: done.rows,
      matched: done.matched,
      missing_here: done.missing_here,
      missing_at_gateway: done.missing_at_gateway,
      amount_mismatch: done.amount_mismatch,
      status_mismatch: done.status_mismatch,
      transaction_mismatch: done.transaction_mismatch,
    },
  }).catch((err: unknown) => services.logger.warn({ err: { message: String(err) } }, 'alert could not be raised'));
}
