import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { webhookSignature } from '../../src/erp/deliver.js';

/** The package's own signer for a secret, as paylink documents the key: base64 after `whsec_`, else raw bytes. */
function packageSign(secret: string, id: string, at: Date, body: string): string {
  let wh: Webhook;
  try {
    wh = secret.startsWith('whsec_')
      ? new Webhook(secret)
      : new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' });
  } catch {
    wh = new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' });
  }
  return wh.sign(id, at, body);
}

describe('the webhook signature', () => {
  it('is the standardwebhooks package signature, byte for byte, for every kind of secret', () => {
    const secrets = fc.oneof(
      fc.uint8Array({ minLength: 1, maxLength: 64 }).map((b) => `whsec_${Buffer.from(b).toString('base64')}`),
      fc.string({ minLength: 1, maxLength: 40 }).map((s) => `whsec_${s}`),
      fc.constant('whsec_'),
      fc.string({ minLength: 1, maxLength: 80, unit: 'binary' }),
    );
    fc.assert(
      fc.property(
        secrets,
        fc.uuid(),
        fc.integer({ min: 0, max: 4_102_444_800_000 }),
        fc.string({ maxLength: 300, unit: 'binary' }),
        (secret, id, ms, body) => {
          const at = new Date(ms);
          expect(webhookSignature(secret, id, at, body)).toBe(packageSign(secret, id, at, body));
        },
      ),
      { numRuns: 500 },
    );
  });
});
