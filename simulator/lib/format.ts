import { createHash, randomUUID } from 'node:crypto';

const JAKARTA_OFFSET_MS = 7 * 60 * 60 * 1000;

/** Midtrans prints WIB wall-clock time without an offset. */
export function jakartaTime(at: Date): string {
  return new Date(at.getTime() + JAKARTA_OFFSET_MS).toISOString().slice(0, 19).replace('T', ' ');
}

/** Amounts travel as strings with two decimals ("150000.00") in Core bodies and notifications. */
export function grossString(amount: number): string {
  return amount.toFixed(2);
}

export function midtransSignature(orderId: string, statusCode: string, grossAmount: string, serverKey: string): string {
  return createHash('sha512')
    .update(orderId + statusCode + grossAmount + serverKey)
    .digest('hex');
}

export function uuid(): string {
  return randomUUID();
}

const TIME_RE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2})(?::(\d{2}))? ?([+-])(\d{2}):?(\d{2})$/;

/** Parses "yyyy-MM-dd HH:mm[:ss] +0700"; the docs' sample omits the seconds, so both forms are accepted. */
export function parseOffsetTime(text: string): Date | undefined {
  const m = TIME_RE.exec(text.trim());
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, sign, oh, om] = m;
  const utc = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s ?? '0'));
  const offset = (Number(oh) * 60 + Number(om)) * 60_000 * (sign === '-' ? -1 : 1);
  const at = new Date(utc - offset);
  return Number.isNaN(at.getTime()) ? undefined : at;
}

/** "2020-12-31 18:00 +0700", the shape the Payment Link details echo back. */
export function offsetTimeShort(at: Date): string {
  return `${jakartaTime(at).slice(0, 16)} +0700`;
}

const UNIT_MS: Record<string, number> = {
  second: 1000,
  seconds: 1000,
  minute: 60_000,
  minutes: 60_000,
  hour: 3_600_000,
  hours: 3_600_000,
  day: 86_400_000,
  days: 86_400_000,
};

export function unitMs(unit: string): number | undefined {
  return UNIT_MS[unit.toLowerCase()];
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
