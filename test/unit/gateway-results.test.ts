/**
 * The domain acts on what the gateway port answers, whichever gateway stands behind it: a link the
 * gateway already holds is adopted when it is ours and refused when it is not, a refusal is
 * recorded and answered 502 with the gateway's code, an unknown transaction is not a link to close.
 * The gateway here is the port's fake; the store is the real one.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTestApp, type TestContext } from '../helpers/services.js';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { seedTransaction } from '../helpers/seed.js';
import { fakeGateway } from '../helpers/fake-gateway.js';
import { createDirectLink } from '../../src/domain/orders/links.js';
import { refundPayment } from '../../src/domain/actions/refund.js';
import { cancelPayment } from '../../src/domain/actions/close.js';
import { GatewayError, toAppError, type Gateway, type Refusal } from '../../src/gateway/port.js';
import { AppError } from '../../src/platform/errors.js';
import type { Services } from '../../src/types.js';

const API = { kind: 'api', account: 'default' } as const;

/** What a rejected call threw, as the HTTP mapper answers it. */
async function answerTo(call: Promise<unknown>): Promise<AppError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (err instanceof GatewayError) return toAppError(err);
  if (err instanceof AppError) return err;
  throw new Error(`expected a rejection, got ${String(err)}`);
}

describe.each(DATABASE_KINDS)('the domain over the gateway port (%s)', (kind) => {
  let ctx: TestContext;
  beforeEach(async () => {
    ctx = await makeTestApp(kind);
  });
  afterEach(async () => ctx.close());

  const over = (gateway: Gateway): Services => ({ ...ctx.services, gateway });

  /** A gateway that writes the link request as the link id it was given, and answers its creation with `created`. */
  function linkGateway(
    created: Awaited<ReturnType<Gateway['createPaymentLink']>>,
    heldLinkId?: (ours: string) => string,
  ) {
    let ours = '';
    const gateway = fakeGateway({
      paymentLinkRequest: (order) => {
        ours = order.paymentLinkId;
        return { link_id: order.paymentLinkId, amount: order.nominal };
      },
      createPaymentLink: async () => created,
      findPaymentLink: async (id) => ({
        orderId: id,
        url: `https://pay.test/${id}`,
        paymentLinkId: heldLinkId ? heldLinkId(ours) : ours,
        newestPurchase: null,
      }),
    });
    return { gateway, ours: () => ours };
  }

  it('a link the gateway already holds under our link id is adopted: the record gets its URL', async () => {
    const { gateway, ours } = linkGateway({ kind: 'exists', refusal: { code: '409', message: 'taken' } });
    const out = await createDirectLink(over(gateway), { order_id: 'SO-ADOPT-1', nominal: 25_000 });
    expect(gateway.calls).toEqual(['paymentLinkRequest', 'createPaymentLink', 'findPaymentLink']);
    expect(out.created).toBe(true);
    expect(out.tx).toMatchObject({
      status: 'pending',
      paymentLinkId: ours(),
      paymentUrl: 'https://pay.test/SO-ADOPT-1',
    });
    expect(JSON.parse(out.tx.gatewayJson ?? '{}')).toEqual({
      order_id: 'SO-ADOPT-1',
      payment_url: 'https://pay.test/SO-ADOPT-1',
    });
    // What was sent is what the gateway wrote when the order was drafted, stored with the record.
    expect(JSON.parse(out.tx.requestJson ?? '{}').gateway).toEqual({ link_id: ours(), amount: 25_000 });
  });

  it('a link the gateway holds under another link id is not ours: 409, and the record stays unconfirmed', async () => {
    const { gateway } = linkGateway(
      { kind: 'exists', refusal: { code: '409', message: 'taken' } },
      () => 'pl-somebody-else',
    );
    const answer = await answerTo(createDirectLink(over(gateway), { order_id: 'SO-ADOPT-2', nominal: 25_000 }));
    expect(answer).toMatchObject({ code: 'ORDER_CONFLICT', status: 409 });
    expect(await ctx.services.store.transactions.findByOrderId('SO-ADOPT-2')).toMatchObject({
      status: 'pending',
      paymentUrl: null,
    });
  });

  it('a refused link is recorded as failed and answered 502 with the gateway code and message', async () => {
    const refusal: Refusal = {
      code: '400',
      message: 'transaction_details.gross_amount is not equal to the sum of item_details',
    };
    const { gateway } = linkGateway({ kind: 'refused', refusal });
    const answer = await answerTo(createDirectLink(over(gateway), { order_id: 'SO-REFUSED-1', nominal: 25_000 }));
    expect(answer).toMatchObject({
      code: 'GATEWAY_REFUSED',
      status: 502,
      extras: { gateway: { status_code: '400', status_message: refusal.message } },
    });
    expect(gateway.calls).toEqual(['paymentLinkRequest', 'createPaymentLink']);
    expect(await ctx.services.store.transactions.findByOrderId('SO-REFUSED-1')).toMatchObject({
      status: 'failed',
      paymentUrl: null,
    });
  });

  it('a refused refund is settled as refused with the gateway code, answered 502, and nothing is asked after it', async () => {
    const tx = await seedTransaction(ctx.services.store, {
      orderId: 'SO-REFUND-1',
      kind: 'charge',
      nominal: 50_000,
      gatewayJson: '{}',
    });
    await ctx.services.store.transactions.update(tx.id, {
      status: 'paid',
      paymentType: 'credit_card',
      gatewayTransactionId: 'gw-tx-1',
    });
    const sent: Parameters<Gateway['refund']>[] = [];
    const refusal: Refusal = { code: '412', message: 'Merchant cannot modify the status of the transaction' };
    const gateway = fakeGateway({
      refund: async (...args) => {
        sent.push(args);
        return { kind: 'refused', refusal };
      },
    });
    const answer = await answerTo(refundPayment(over(gateway), 'SO-REFUND-1', { amount: 10_000 }, API));
    expect(answer).toMatchObject({
      code: 'GATEWAY_REFUSED',
      status: 502,
      extras: { gateway: { status_code: '412', status_message: refusal.message } },
    });
    expect(gateway.calls).toEqual(['refund']);
    expect(sent).toEqual([
      [
        'gw-tx-1',
        { refundKey: expect.stringMatching(/^rf-[0-9a-f]{32}$/), amount: 10_000 },
        { carrier: 'legacy', paymentType: 'credit_card' },
      ],
    ]);
    const [kept] = await ctx.services.store.refunds.listFor(tx.id);
    expect(kept).toMatchObject({ state: 'refused', gatewayCode: '412', amount: 10_000, leaseUntil: null });
    expect(await ctx.services.store.transactions.findById(tx.id)).toMatchObject({ status: 'paid', refundedAmount: 0 });
  });

  it('a charge the gateway does not know cannot be cancelled: 502 with its 404, nothing closed here', async () => {
    const tx = await seedTransaction(ctx.services.store, { orderId: 'SO-CANCEL-1', kind: 'charge', gatewayJson: '{}' });
    const gateway = fakeGateway({
      cancel: async () => ({ kind: 'not_found', refusal: { code: '404', message: "Transaction doesn't exist." } }),
    });
    const answer = await answerTo(cancelPayment(over(gateway), 'SO-CANCEL-1', API));
    expect(answer).toMatchObject({ code: 'GATEWAY_REFUSED', status: 502, extras: { gateway: { status_code: '404' } } });
    expect(await ctx.services.store.transactions.findById(tx.id)).toMatchObject({ status: 'pending' });
  });
});
