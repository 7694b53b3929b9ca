/**
 * The API's one time format: ISO 8601 in Jakarta time with its offset (`2026-11-22T10:00:00+07:00`),
 * the gateway's clock and the ERP events' format. Stored instants (UTC `Z`) and the gateway's
 * zone-less `YYYY-MM-DD HH:mm:ss` (WIB) are both written this way.
 */
import { gatewayTimeToIso } from '../../gateway/time.js';

/** Pattern every time field of an answer matches. */
export const API_TIME_PATTERN = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\+07:00$';

export function apiTime(v: string): string {
  return gatewayTimeToIso(v) ?? v;
}

export function apiTimeOrNull(v: string | null | undefined): string | null {
  return v === null || v === undefined || v === '' ? null : apiTime(v);
}
