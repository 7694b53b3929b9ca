/** `expire_at` parsing: when an order's payment window closes. */
import { AppError } from '../../platform/errors.js';
import { gatewayTime } from '../../gateway/time.js';
import { JAKARTA_OFFSET_MINUTES } from '../../platform/time.js';

const MINUTE_MS = 60_000;
/** Longest link lifetime we accept; far-future dates are almost always a typo (year 20260). */
export const MAX_EXPIRY_DAYS = 366;

const ISO = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|z|[+-]\d{2}(?::?\d{2})?)$/;
const JAKARTA_LOCAL = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;

function invalid(detail: string): AppError {
  return new AppError('EXPIRY_INVALID', detail, { errors: [{ path: 'expire_at', message: detail }] });
}

function offsetMinutes(zone: string): number | undefined {
  if (zone === 'Z' || zone === 'z') return 0;
  const m = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone);
  if (!m) return undefined;
  const h = Number(m[2]);
  const mi = Number(m[3] ?? '0');
  if (h > 23 || mi > 59) return undefined;
  return (m[1] === '-' ? -1 : 1) * (h * 60 + mi);
}

/** Builds the instant, refusing calendar overflow (2026-02-30 does not silently become March 2). */
function instant(parts: number[], offsetMin: number): Date | undefined {
  const [y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0, ms = 0] = parts;
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return undefined;
  const utc = Date.UTC(y, mo - 1, d, h, mi, s, ms);
  const check = new Date(utc);
  if (check.getUTCFullYear() !== y || check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== d) return undefined;
  return new Date(utc - offsetMin * MINUTE_MS);
}

/** Parses without judging the time: ISO 8601 with an offset, or `YYYY-MM-DD HH:mm:ss` in Jakarta time. */
export function parseExpireAtText(text: string): Date | undefined {
  const iso = ISO.exec(text);
  if (iso) {
    const offset = offsetMinutes(iso[8] ?? '');
    if (offset === undefined) return undefined;
    const ms = iso[7] ? Number(iso[7].padEnd(3, '0').slice(0, 3)) : 0;
    return instant([1, 2, 3, 4, 5, 6].map((i) => Number(iso[i] ?? '0')).concat(ms), offset);
  }
  const local = JAKARTA_LOCAL.exec(text);
  if (local)
    return instant(
      [1, 2, 3, 4, 5, 6].map((i) => Number(local[i] ?? '0')),
      JAKARTA_OFFSET_MINUTES,
    );
  return undefined;
}

export interface Expiry {
  /** When the link stops accepting payments. */
  expireAt: Date;
  /** The gateway's `expiry.start_time` (creation time, Jakarta). */
  startTime: string;
  /** Minutes from start to expiry, rounded up so the link never closes before `expireAt`. */
  durationMinutes: number;
}

/** `expire_at` → expiry; absent → `defaultMinutes` from now. Malformed, past or too far → 400 EXPIRY_INVALID. */
export function resolveExpiry(expireAt: string | undefined, now: Date, defaultMinutes: number): Expiry {
  const start = new Date(Math.floor(now.getTime() / 1000) * 1000);
  if (expireAt === undefined) {
    const minutes = Math.max(1, Math.round(defaultMinutes));
    return {
      expireAt: new Date(start.getTime() + minutes * MINUTE_MS),
      startTime: gatewayTime(start),
      durationMinutes: minutes,
    };
  }
  const at = parseExpireAtText(expireAt.trim());
  if (!at)
    throw invalid(
      'expire_at must be ISO 8601 with an offset (2026-12-01T10:00:00+07:00) or "YYYY-MM-DD HH:mm:ss" in Jakarta time.',
    );
  if (at.getTime() <= now.getTime()) throw invalid('expire_at must lie in the future.');
  if (at.getTime() - now.getTime() > MAX_EXPIRY_DAYS * 24 * 60 * MINUTE_MS)
    throw invalid(`expire_at must lie within ${MAX_EXPIRY_DAYS} days.`);
  const durationMinutes = Math.max(1, Math.ceil((at.getTime() - start.getTime()) / MINUTE_MS));
  return { expireAt: at, startTime: gatewayTime(start), durationMinutes };
}
