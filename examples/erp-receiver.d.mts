import type http from 'node:http';

export interface PaylinkEvent {
  type: string;
  event_id: string;
  order_id: string;
  status: string;
  status_version: number;
  refunded_amount?: number;
  [field: string]: unknown;
}

export function verifyPaylinkEvent(secret: string, rawBody: string, headers: Record<string, string | string[] | undefined>): PaylinkEvent;
export function createReceiver(secret: string, apply: (event: PaylinkEvent) => void): http.Server;
