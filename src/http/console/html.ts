/**
 * HTML by tagged template: every interpolated value is escaped unless it is already `Html` (made
 * by this template or `raw` on a constant), so escaping cannot be forgotten page by page.
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"'`]/g, (c) => ESCAPES[c] ?? c);
}

type Value = Html | string | number | boolean | null | undefined | readonly Value[];

function render(v: Value): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof Html) return v.text;
  if (Array.isArray(v)) return v.map((x: Value) => render(x)).join('');
  return escapeHtml(String(v));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0] ?? '';
  values.forEach((v, i) => {
    out += render(v) + (strings[i + 1] ?? '');
  });
  return new Html(out);
}

/** Only for constants written in this code base, never for data. */
export function raw(s: string): Html {
  return new Html(s);
}

export { formatRupiah as rupiah } from '../../platform/i18n.js';

/** Midnight of the day `now` falls on in `timeZone`, as an instant. */
export function startOfDay(now: Date, timeZone: string): Date {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(now);
  const n = (t: string) => Number(parts.find((p) => p.type === t)?.value ?? '0');
  const elapsedMs = ((n('hour') * 60 + n('minute')) * 60 + n('second')) * 1000 + now.getUTCMilliseconds();
  return new Date(now.getTime() - elapsedMs);
}

/** An instant from a `datetime-local` / date input read in the operator's time zone. */
export function zonedInput(value: string, timeZone: string): Date | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2}))?$/.exec(value);
  if (!m) return undefined;
  const asUtc = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4] ?? 0), Number(m[5] ?? 0));
  if (Number.isNaN(asUtc)) return undefined;
  // The zone's offset at that wall time: format the UTC guess there and measure the difference.
  const guess = new Date(asUtc);
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(guess);
  const p = (t: string) => Number(parts.find((x) => x.type === t)?.value ?? '0');
  const wall = Date.UTC(p('year'), p('month') - 1, p('day'), p('hour'), p('minute'));
  return new Date(asUtc - (wall - asUtc));
}
