/**
 * Text columns that hold one of a fixed list of values are checked against that list when read, so
 * a row written by a newer version (or by hand) is a clear error here, not a wrong branch later.
 */
export class UnexpectedValueError extends Error {
  constructor(column: string, value: string) {
    super(`unexpected ${column} in the database: ${JSON.stringify(value.slice(0, 40))}`);
    this.name = 'UnexpectedValueError';
  }
}

export function oneOf<T extends string>(list: readonly T[], value: string, column: string): T {
  const found = list.find((v) => v === value);
  if (found === undefined) throw new UnexpectedValueError(column, value);
  return found;
}

/** The value when it is on the list, else undefined (for reads that skip rows they do not know). */
export function asOneOf<T extends string>(list: readonly T[], value: string): T | undefined {
  return list.find((v) => v === value);
}
