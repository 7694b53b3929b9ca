/** The gateway's spellings of Jakarta time (WIB), on the one Jakarta-time module (platform/time.ts). */
import { jakartaIsoOf, jakartaWallClock } from '../platform/time.js';

/**
 * The gateway writes times as `YYYY-MM-DD HH:MM:SS` in WIB without a zone. Anything else that
 * parses as a zoned ISO time is converted; unparseable → null (never a guess).
 */
export function gatewayTimeToIso(s: string | null | undefined): string | null {
  return jakartaIsoOf(s);
}

/** The gateway's `yyyy-MM-dd HH:mm:ss Z` in Jakarta time, e.g. `2026-11-22 10:00:00 +0700`. */
export function gatewayTime(at: Date): string {
  return `${jakartaWallClock(at).replace('T', ' ')} +0700`;
}
