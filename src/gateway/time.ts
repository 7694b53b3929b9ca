/** The gateway's spellings of Jakarta time (WIB, +07:00). */
import { toJakartaIso } from '../platform/time.js';

const JAKARTA_OFFSET_MS = 7 * 3600_000;

/**
 * The gateway writes times as `YYYY-MM-DD HH:MM:SS` in WIB without a zone. Anything else that
 * parses as a zoned ISO time is converted; unparseable → null (never a guess).
 */
export function gatewayTimeToIso(s: string | null | undefined): string | null {
  if (s === null || s === undefined || s === '') return null;
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})$/.exec(s.trim());
  if (m) return `${m[1]}T${m[2]}+07:00`;
  if (!/(Z|[+-]\d{2}:?\d{2})$/.test(s.trim())) return null;
  const t = Date.parse(s);
  return Number.isNaN(t) ? null : toJakartaIso(new Date(t));
}

/** The gateway's `yyyy-MM-dd HH:mm:ss Z` in Jakarta time, e.g. `2026-11-22 10:00:00 +0700`. */
export function gatewayTime(at: Date): string {
  const local = new Date(at.getTime() + JAKARTA_OFFSET_MS).toISOString();
  return `${local.slice(0, 10)} ${local.slice(11, 19)} +0700`;
}
