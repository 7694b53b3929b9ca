/**
 * Which methods a concrete path has routes for, so a wrong method on an existing path is a 405
 * with `Allow` rather than a 404. Built from the routes as they are registered; route patterns
 * here use only literal segments, `:param` segments and a trailing `*`.
 */
export interface MethodTable {
  add(methods: string | string[], url: string): void;
  /** The methods registered for `path` (no query string), sorted; empty when no route matches. */
  allowed(path: string): string[];
}

function matches(pattern: string[], path: string[]): boolean {
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i];
    if (p === '*') return true;
    const s = path[i];
    if (s === undefined) return false;
    if (p?.startsWith(':')) {
      if (s === '') return false;
    } else if (p !== s) return false;
  }
  return pattern.length === path.length;
}

export function createMethodTable(): MethodTable {
  const routes: Array<{ methods: string[]; segments: string[] }> = [];
  return {
    add(methods, url) {
      routes.push({ methods: Array.isArray(methods) ? methods : [methods], segments: url.split('/') });
    },
    allowed(path) {
      const segments = path.split('/');
      const out = new Set<string>();
      for (const r of routes) if (matches(r.segments, segments)) for (const m of r.methods) out.add(m.toUpperCase());
      return [...out].sort();
    },
  };
}
