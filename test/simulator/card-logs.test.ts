import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { start } from './helpers.js';

describe('card data in the query string never reaches the logs', () => {
  it('an embedded simulator with a logger (as paylink runs it) logs /v2/token without the card number, CVV or client key', async () => {
    const lines: string[] = [];
    const logger = pino(
      { level: 'info' },
      new Writable({
        write: (chunk: Buffer, _enc, done) => {
          lines.push(chunk.toString('utf8'));
          done();
        },
      }),
    );
    const sim = await start({ clientKey: 'SB-Mid-client-logcheck', logger });
    try {
      const q =
        'client_key=SB-Mid-client-logcheck&card_number=4811111111111114&card_exp_month=12&card_exp_year=2099&card_cvv=987';
      expect((await fetch(`${sim.baseUrl}/v2/token?${q}`)).status).toBe(200);
      expect((await fetch(`${sim.baseUrl}/v2/card/register?${q}`)).status).toBe(200);
    } finally {
      await sim.close();
    }
    const text = lines.join('');
    expect(text).toContain('/v2/token');
    for (const secret of ['4811111111111114', 'card_cvv=987', 'SB-Mid-client-logcheck'])
      expect(text).not.toContain(secret);
  });
});
