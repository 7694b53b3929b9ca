export function sourceHash(root?: string): string;
export function ensureBuilt(o?: { root?: string; force?: boolean; entry?: string }): 'fresh' | 'built' | 'prebuilt';
