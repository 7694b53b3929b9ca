import type { Page } from '../../model/page.js';

export type { Page };

/** Opaque keyset cursors: base64url JSON of the last row's sort key. Malformed → undefined (callers reject it with 400). */
export interface Cursor {
  at: string;
  id: string;
}

export function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify([c.at, c.id])).toString('base64url');
}

export function decodeCursor(s: string): Cursor | undefined {
  try {
    const v: unknown = JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string')
      return { at: v[0], id: v[1] };
  } catch {
    // malformed: treated like an unknown cursor
  }
  return undefined;
}
