/** One page of a keyset-paginated list. */
export interface Page<T> {
  items: T[];
  /** Opaque; pass back to get the next page. Absent on the last page. */
  nextCursor?: string;
}
