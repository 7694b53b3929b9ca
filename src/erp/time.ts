/** ERP events carry times as ISO 8601 in Jakarta time (+07:00), like the gateway's own clock. */
const JAKARTA_OFFSET_MS = 7 * 3600_000;

export function toJakartaIso(d: Date): string {
  const shifted = new Date(d.getTime() + JAKARTA_OFFSET_MS).toISOString();
  return `${shifted.slice(0, 19)}+07:00`;
}

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
