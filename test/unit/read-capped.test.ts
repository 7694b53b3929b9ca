/** A gateway answer's body is read up to a cap: past it the stream is destroyed and the answer refused. */
import { describe, expect, it } from 'vitest';
import { readCapped } from '../../src/gateway/read-capped.js';
import { GatewayError } from '../../src/gateway/port.js';

function chunks(parts: string[]) {
  let destroyed = false;
  const stream = {
    async *[Symbol.asyncIterator]() {
      for (const p of parts) yield Buffer.from(p, 'utf8');
    },
    destroy() {
      destroyed = true;
    },
  };
  return { stream, destroyed: () => destroyed };
}

describe('readCapped', () => {
  it('joins the chunks of a body within the cap, multi-byte characters across chunks included', async () => {
    const rupiah = Buffer.from('{"m":"Rp 1.000 — ok"}', 'utf8');
    const s = chunks([]);
    const split = {
      ...s.stream,
      async *[Symbol.asyncIterator]() {
        yield rupiah.subarray(0, 16);
        yield rupiah.subarray(16);
      },
    };
    expect(await readCapped(split, rupiah.length)).toBe('{"m":"Rp 1.000 — ok"}');
  });

  it('refuses a body past the cap as bad_response and destroys the stream', async () => {
    const s = chunks(['12345', '67890', 'x']);
    const err = await readCapped(s.stream, 10).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({ kind: 'bad_response' });
    expect(s.destroyed()).toBe(true);
  });
});
