/**
 * Jakarta time (WIB, UTC+7, no daylight saving): the gateway's clock, and the one form paylink
 * writes times in, in the API and the ERP events: ISO 8601 with the offset
 * (`2026-11-22T10:00:00+07:00`). The offset is kept here only; the gateway's own spellings
 * (gateway/midtrans/time.ts) build on these functions. The simulator keeps its own copy on purpose:
 * it checks paylink, so it must not share paylink's code.
 *
 * Stored times come in two forms, each compared as text only with its own kind: paylink's own
 * instants (created, updated, expiry, next attempt, …) are UTC ISO text with `Z`; the gateway's
 * payment times (`transaction_time`, `settlement_time`) are kept in Jakarta time, ISO with `+07:00`
 * (the day helpers below bound them). `apiTime` shows both the same way.
 */
export const JAKARTA_OFFSET = '+07:00';
export const JAKARTA_OFFSET_MINUTES = 7 * 60;
const JAKARTA_OFFSET_MS = JAKARTA_OFFSET_MINUTES * 60_000;

/** Jakarta's wall clock at `d`, `YYYY-MM-DDTHH:mm:ss`, without an offset. */
export function jakartaWallClock(d: Date): string {
  return new Date(d.getTime() + JAKARTA_OFFSET_MS).toISOString().slice(0, 19);
}

export function toJakartaIso(d: Date): string {
  return `${jakartaWallClock(d)}${JAKARTA_OFFSET}`;
}

/** The Jakarta calendar day (`YYYY-MM-DD`) of an instant given as ISO 8601 with an offset or `Z`. */
export function jakartaDay(iso: string): string {
  return toJakartaIso(new Date(iso)).slice(0, 10);
}

/** The first second of a Jakarta day (`YYYY-MM-DD`), as ISO 8601 with the offset. */
export function jakartaDayStart(day: string): string {
  return `${day}T00:00:00${JAKARTA_OFFSET}`;
}

/** The last whole second of a Jakarta day (`YYYY-MM-DD`), as ISO 8601 with the offset. */
export function jakartaDayEnd(day: string): string {
  return `${day}T23:59:59${JAKARTA_OFFSET}`;
}

/**
 * `YYYY-MM-DD HH:MM:SS` without a zone is Jakarta wall-clock time (how the gateway writes times);
 * anything else that parses as a zoned ISO time is converted. Either way the answer is ISO in
 * Jakarta time; unparseable → null (never a guess).
 */
export function jakartaIsoOf(s: string | null | undefined): string | null {
  if (s === null || s === undefined || s === '') return null;
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})$/.exec(s.trim());
  if (m) return `${m[1]}T${m[2]}${JAKARTA_OFFSET}`;
  if (!/(Z|[+-]\d{2}:?\d{2})$/.test(s.trim())) return null;
  const t = Date.parse(s);
  return Number.isNaN(t) ? null : toJakartaIso(new Date(t));
}

/**
 * A time as the API writes it: stored instants (UTC `Z`) and the gateway's zone-less Jakarta text
 * both become ISO 8601 in Jakarta time; text that is neither is shown as stored.
 */
export function apiTime(v: string): string {
  return jakartaIsoOf(v) ?? v;
}

export function apiTimeOrNull(v: string | null | undefined): string | null {
  return v === null || v === undefined || v === '' ? null : apiTime(v);
}
