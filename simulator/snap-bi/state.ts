/** What the simulator's BI-SNAP side keeps beside the shared ledger: tokens, X-EXTERNAL-IDs of the day, its transactions. */
import { randomBytes } from 'node:crypto';

export type SnapKind = 'va' | 'debit' | 'qris';

export interface SnapTxn {
  kind: SnapKind;
  /** trxId / partnerReferenceNo: the order id in the shared ledger. */
  orderId: string;
  externalId: string;
  /** The gateway's id (the ledger's transaction id), `referenceNo` on the wire. */
  referenceNo: string;
  va?: { partnerServiceId: string; customerNo: string; virtualAccountNo: string; virtualAccountName: string };
  payMethod?: string;
  refunds: { refundNo: string; partnerRefundNo: string; amount: number; at: Date; reason?: string }[];
}

export interface Answer {
  status: number;
  body: Record<string, unknown>;
}

export class SnapBiState {
  private readonly tokens = new Map<string, number>();
  /** `${jakartaDate}|${externalId}` → the request's body digest and the answer given. */
  private readonly externalIds = new Map<string, { digest: string; answer: Answer }>();
  readonly byOrder = new Map<string, SnapTxn>();

  issueToken(lifetimeS: number): string {
    const token = randomBytes(36).toString('base64url');
    this.tokens.set(token, Date.now() + lifetimeS * 1000);
    return token;
  }

  tokenValid(token: string): boolean {
    const until = this.tokens.get(token);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    this.tokens.delete(token);
    return false;
  }

  /** Ends every token at once (`POST /_sim/snap-bi/expire-tokens`), as if their lifetime had passed. */
  expireTokens(): void {
    this.tokens.clear();
  }

  seen(externalId: string): { digest: string; answer: Answer } | undefined {
    return this.externalIds.get(dayKey(externalId));
  }

  remember(externalId: string, digest: string, answer: Answer): void {
    this.externalIds.set(dayKey(externalId), { digest, answer });
  }

  byReference(referenceNo: string): SnapTxn | undefined {
    for (const t of this.byOrder.values()) if (t.referenceNo === referenceNo) return t;
    return undefined;
  }

  clear(): void {
    this.tokens.clear();
    this.externalIds.clear();
    this.byOrder.clear();
  }
}

/** X-EXTERNAL-ID is unique within a day, in Jakarta time. */
function dayKey(externalId: string): string {
  const day = new Date(Date.now() + 7 * 3_600_000).toISOString().slice(0, 10);
  return `${day}|${externalId}`;
}
