/**
 * Reading the gateway's dashboard export: columns are found by their header, never their position
 * (the gateway adds columns and lets the merchant choose them), under the names its dashboard uses;
 * a mapping names them for other layouts. Cells are read strictly: a value that cannot be read is a
 * 400 naming its line and column, never a guess.
 */
import { AppError } from '../../platform/errors.js';
import { readRupiahText } from '../orders/input.js';
import type { ReportRow } from '../../model/reconciliation.js';
import { JAKARTA_OFFSET, jakartaDay } from '../../platform/time.js';

export const REPORT_FIELDS = [
  'order_id',
  'transaction_id',
  'status',
  'amount',
  'fee',
  'net',
  'original_amount',
  'payment_type',
  'transaction_time',
  'settlement_time',
  'refund_type',
  'split_type',
  'split_sender',
  'split_receiver',
] as const;
export type ReportField = (typeof REPORT_FIELDS)[number];
const REQUIRED: readonly ReportField[] = ['order_id', 'status', 'amount'];

/** The headers the dashboard's exports use for each field (compared without case, spaces or punctuation). */
const KNOWN_HEADERS: Record<ReportField, readonly string[]> = {
  order_id: ['Order ID', 'order_id', 'OrderID', 'Merchant Order ID'],
  transaction_id: ['Transaction ID', 'transaction_id', 'Reference No', 'referenceNo'],
  status: ['Transaction Status', 'Transaction status', 'Status', 'transaction_status'],
  amount: ['Amount', 'Gross Amount', 'Transaction Amount', 'gross_amount', 'Amount (Gross)'],
  fee: ['Fee', 'Mdr amount', 'MDR Amount', 'Total Fee', 'fee', 'fee_amount'],
  net: ['Net', 'Net Amount', 'Amount (Net)', 'Payable (Nett)', 'net_amount'],
  original_amount: ['Promo Original Amount', 'Promo original amount', 'Original Amount', 'original_amount'],
  payment_type: ['Payment Type', 'Payment type', 'Payment Method', 'Channel', 'payment_type'],
  transaction_time: ['Transaction Time', 'Transaction time', 'Transaction Date', 'Date & Time', 'transaction_time'],
  settlement_time: ['Settlement Time', 'Settlement time', 'Settlement Date', 'settlement_time'],
  // The withdrawal report's newer columns. The changelog names them
  // "Refund Type" and, for Transaction Split, "Transaction Type", "Sender", "Receiver"; the exact
  // header strings of an export are unconfirmed, so the Indonesian and spelled-out forms are read too.
  refund_type: ['Refund Type', 'Tipe Refund', 'Jenis Refund', 'refund_type'],
  split_type: ['Transaction Split Type', 'Split Type', 'Transaction Type', 'Tipe Transaksi', 'split_type'],
  split_sender: ['Sender', 'Split Sender', 'Pengirim', 'split_sender'],
  split_receiver: ['Receiver', 'Split Receiver', 'Penerima', 'split_receiver'],
};

const norm = (h: string) =>
  h
    .replace(/^\uFEFF/, '')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');

/** `field:Header,field:Header` or a JSON object `{ "field": "Header" }`; the fields not named keep the known headers. */
export function parseColumnMapping(raw: string | undefined): Partial<Record<ReportField, string>> {
  if (raw === undefined || raw.trim() === '') return {};
  let pairs: Array<[string, unknown]>;
  if (raw.trim().startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw new AppError('VALIDATION_FAILED', 'columns is not valid JSON.', {
        errors: [{ path: 'columns', message: 'must be a JSON object or field:Header pairs' }],
      });
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
      throw new AppError('VALIDATION_FAILED', 'columns must be an object.', {
        errors: [{ path: 'columns', message: 'must be a JSON object or field:Header pairs' }],
      });
    pairs = Object.entries(parsed);
  } else {
    pairs = raw.split(',').map((p) => {
      const i = p.indexOf(':');
      return i < 0 ? [p.trim(), undefined] : [p.slice(0, i).trim(), p.slice(i + 1).trim()];
    });
  }
  const out: Partial<Record<ReportField, string>> = {};
  for (const [field, header] of pairs) {
    if (!(REPORT_FIELDS as readonly string[]).includes(field))
      throw new AppError(
        'VALIDATION_FAILED',
        `columns names an unknown field ${JSON.stringify(field.slice(0, 40))}; the fields are ${REPORT_FIELDS.join(', ')}.`,
        { errors: [{ path: 'columns', message: `unknown field ${field.slice(0, 40)}` }] },
      );
    if (typeof header !== 'string' || header === '')
      throw new AppError('VALIDATION_FAILED', `columns: ${field} needs a header name.`, {
        errors: [{ path: 'columns', message: `${field} needs a header name` }],
      });
    out[field as ReportField] = header;
  }
  return out;
}

export type ColumnIndex = Partial<Record<ReportField, number>>;

/** Where each field is in this file's header row; 400 when a required one is not there. */
export function locateColumns(header: readonly string[], mapping: Partial<Record<ReportField, string>>): ColumnIndex {
  const at = new Map(header.map((h, i) => [norm(h), i]));
  const index: ColumnIndex = {};
  for (const field of REPORT_FIELDS) {
    const names = mapping[field] !== undefined ? [mapping[field]] : KNOWN_HEADERS[field];
    const found = names.map((n) => at.get(norm(n ?? ''))).find((i) => i !== undefined);
    if (found !== undefined) index[field] = found;
  }
  const missing = REQUIRED.filter((f) => index[f] === undefined);
  if (missing.length > 0) {
    const want = missing.map(
      (f) =>
        `${f} (${
          mapping[f] !== undefined
            ? JSON.stringify(mapping[f])
            : KNOWN_HEADERS[f]
                .slice(0, 3)
                .map((h) => JSON.stringify(h))
                .join(' or ')
        })`,
    );
    throw new AppError(
      'VALIDATION_FAILED',
      `Line 1: the header has no column for ${want.join(', ')}; name them with ?columns=field:Header.`,
      { errors: missing.map((f) => ({ path: 'line 1', message: `no column for ${f}` })) },
    );
  }
  return index;
}

export function malformed(line: number, column: string, message: string): AppError {
  return new AppError('VALIDATION_FAILED', `Line ${line}, column ${JSON.stringify(column)}: ${message}.`, {
    errors: [{ path: `line ${line}, column ${column}`, message }],
  });
}

/** Whole rupiah: `150000`, `150000.00`, `150000,00`, `150,000.00`, `150.000,00`, `Rp 150.000`; never negative. */
export function readAmount(raw: string, line: number, column: string): number {
  const read = readRupiahText(raw);
  const shown = JSON.stringify(raw.slice(0, 40));
  if (read === 'not_an_amount')
    throw malformed(
      line,
      column,
      `${shown} is not an amount in rupiah (150000, 150000.00, 150000,00, 150,000.00 or 150.000,00)`,
    );
  if (read === 'fraction') throw malformed(line, column, `${shown} has a fraction of a rupiah`);
  return read;
}

/** The Jakarta days a report's dates may fall on: from two years before the import's day to the day after it. */
export interface DateWindow {
  from: string;
  to: string;
}

export function reportWindow(now: Date): DateWindow {
  const today = jakartaDay(now.toISOString());
  const [y, m, d] = today.split('-').map(Number);
  const day = (dy: number, dd: number) =>
    new Date(Date.UTC((y ?? 0) + dy, (m ?? 1) - 1, (d ?? 1) + dd)).toISOString().slice(0, 10);
  return { from: day(-2, 0), to: day(0, 1) };
}

/** Whether `YYYY-MM-DD` names a day of the calendar (`2026-02-30` does not). */
export function isCalendarDay(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const d = new Date(0);
  // setUTCFullYear, not Date.UTC: that one reads the years 0 to 99 as 1900 to 1999.
  d.setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
}

const TIME_FORMS = '(YYYY-MM-DD HH:MM:SS, Jakarta time, or ISO 8601 with an offset)';

/** `YYYY-MM-DD HH:MM:SS` (Jakarta, as the gateway writes it) or ISO 8601 with an offset → ISO with offset, on a day of `window`; empty → null. */
export function readTime(raw: string, line: number, column: string, window: DateWindow): string | null {
  const s = raw.trim();
  if (s === '') return null;
  const shown = JSON.stringify(s.slice(0, 40));
  const local = /^(\d{4}-\d{2}-\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(s);
  const iso = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:Z|[+-](?:0\d|1[0-4]):?[0-5]\d)$/.exec(s);
  const m = local ?? iso;
  if (!m) throw malformed(line, column, `${shown} is not a date and time ${TIME_FORMS}`);
  const [, day = '', hh = '00', mm = '00', ss = '00'] = m;
  if (!isCalendarDay(day) || Number(hh) > 23 || Number(mm) > 59 || Number(ss) > 59)
    throw malformed(line, column, `${shown} is not a real date and time`);
  const out = local ? `${day}T${hh}:${mm}:${ss}${JAKARTA_OFFSET}` : s;
  const jakarta = jakartaDay(out);
  if (jakarta < window.from || jakarta > window.to)
    throw malformed(
      line,
      column,
      `${shown} is outside the days a report of today can cover (${window.from} to ${window.to}, Jakarta)`,
    );
  return out;
}

/** The fee and net of a row, each completed from the other; fee ≤ amount and net = amount − fee, or a 400. */
export function feeAndNet(
  amount: number,
  fee: number | null,
  net: number | null,
  line: number,
  name: (f: ReportField) => string,
): { fee: number | null; net: number | null } {
  if (fee !== null && fee > amount)
    throw malformed(line, name('fee'), `the fee ${fee} is more than the amount ${amount}`);
  if (net !== null && net > amount)
    throw malformed(line, name('net'), `the net ${net} is more than the amount ${amount}`);
  if (fee !== null && net !== null && net !== amount - fee)
    throw malformed(
      line,
      name('net'),
      `the net ${net} is not the amount ${amount} less the fee ${fee} (${amount - fee})`,
    );
  if (fee !== null) return { fee, net: amount - fee };
  if (net !== null) return { fee: amount - net, net };
  return { fee: null, net: null };
}

/** Where a record holds a NUL (U+0000), which no database column can keep: a 400 naming its cell. */
export function refuseNul(cells: readonly string[], line: number, header: readonly string[]): void {
  const at = cells.findIndex((c) => c.includes('\u0000'));
  if (at < 0) return;
  const hint = line === 1 ? ' (a UTF-16 file needs its byte-order mark; other binary files are not reports)' : '';
  const name = header[at];
  throw malformed(
    line,
    name === undefined || name.includes('\u0000') ? String(at + 1) : name,
    `contains a NUL character (U+0000)${hint}`,
  );
}

/** One data line of the file as a report row. */
export function readRow(
  cells: readonly string[],
  line: number,
  index: ColumnIndex,
  header: readonly string[],
  window: DateWindow,
): ReportRow {
  refuseNul(cells, line, header);
  const cell = (f: ReportField): string | undefined =>
    index[f] === undefined ? undefined : (cells[index[f] ?? 0] ?? '').trim();
  const name = (f: ReportField) => header[index[f] ?? 0] ?? f;
  const required = (f: ReportField): string => {
    const v = cell(f);
    if (v === undefined || v === '') throw malformed(line, name(f), 'is empty');
    return v;
  };
  const amountOf = (f: ReportField): number | null => {
    const v = cell(f);
    return v === undefined || v === '' ? null : readAmount(v, line, name(f));
  };
  const timeOf = (f: ReportField): string | null => {
    const v = cell(f);
    return v === undefined ? null : readTime(v, line, name(f), window);
  };
  const refundTypeCell = cell('refund_type');
  const refundType = refundTypeCell === undefined ? null : readRefundType(refundTypeCell, line, name('refund_type'));
  const splitCells = [cell('split_type'), cell('split_sender'), cell('split_receiver')].map((c) => c || null);
  const orderId = required('order_id');
  const status = required('status').toLowerCase();
  const amount = readAmount(required('amount'), line, name('amount'));
  return {
    line,
    orderId,
    transactionId: cell('transaction_id') || null,
    status,
    amount,
    ...feeAndNet(amount, amountOf('fee'), amountOf('net'), line, name),
    originalAmount: amountOf('original_amount'),
    paymentType: cell('payment_type') || null,
    transactionTime: timeOf('transaction_time'),
    settlementTime: timeOf('settlement_time'),
    refundType,
    // A split names its parties: a "Transaction Type" alone (the balance statement's payment/refund
    // column has that header too) makes no split.
    split:
      splitCells[1] !== null || splitCells[2] !== null
        ? { type: splitCells[0] ?? null, sender: splitCells[1] ?? null, receiver: splitCells[2] ?? null }
        : null,
  };
}

/**
 * The Refund Type cell: a chargeback (the customer's bank reversed the payment) or a normal refund
 * (the merchant's); empty on a row that is no refund. Anything else is a 400 naming the cell.
 */
function readRefundType(raw: string, line: number, column: string): 'chargeback' | 'refund' | null {
  const s = norm(raw);
  if (s === '') return null;
  if (s.includes('chargeback')) return 'chargeback';
  if (s === 'normalrefund' || s === 'refund' || s === 'normal' || s === 'refundnormal') return 'refund';
  throw malformed(line, column, `${JSON.stringify(raw.slice(0, 40))} is neither a chargeback nor a normal refund`);
}
