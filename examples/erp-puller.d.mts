import type { PaylinkEvent } from './erp-receiver.mjs';

export function pullPaylinkEvents(o: {
  baseUrl: string;
  apiKey: string;
  loadCursor: () => Promise<string | undefined>;
  saveCursor: (cursor: string) => Promise<void>;
  handle: (event: PaylinkEvent) => Promise<void>;
  signal?: AbortSignal;
}): Promise<void>;
