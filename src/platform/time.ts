/**
 * Jakarta time (WIB, +07:00, no daylight saving): the gateway's clock, and how paylink writes times
 * in the API and the ERP events (ISO 8601 with the offset).
 */
const JAKARTA_OFFSET_MS = 7 * 3600_000;

export function toJakartaIso(d: Date): string {
  const shifted = new Date(d.getTime() + JAKARTA_OFFSET_MS).toISOString();
  return `${shifted.slice(0, 19)}+07:00`;
}

/** The Jakarta calendar day (`YYYY-MM-DD`) of an instant given as ISO 8601 with an offset or `Z`. */
export function jakartaDay(iso: string): string {
  return toJakartaIso(new Date(iso)).slice(0, 10);
}
