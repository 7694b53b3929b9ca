/**
 * CSV as spreadsheets read it: UTF-8 with a byte-order mark (so Excel does not guess another
 * encoding), RFC 4180 quoting, CRLF line ends, a header row. A text cell that begins with `=`, `+`,
 * `-` or `@` (or a tab or carriage return) is prefixed with `'`: a spreadsheet would otherwise run it
 * as a formula (an order id or customer name from outside must never become one). Numbers are
 * written as numbers.
 */
export const CSV_BOM = '\uFEFF';
export const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8';

export type Cell = string | number | boolean | null | undefined;

function cell(v: Cell): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  const safe = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
  return /[",\r\n]/.test(safe) || safe !== safe.trim() ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export function csvLine(cells: readonly Cell[]): string {
  return `${cells.map(cell).join(',')}\r\n`;
}
