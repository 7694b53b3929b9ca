/**
 * A stand-in for the gateway port, for tests of the domain: each call answers as the test scripted
 * it, a call it did not script fails loudly, and `calls` lists them in order. How the real gateway
 * answers stays the simulator's to show, over HTTP.
 */
import type { Gateway } from '../../src/gateway/port.js';

export interface FakeGateway extends Gateway {
  calls: (keyof Gateway)[];
}

export function fakeGateway(script: Partial<Gateway>): FakeGateway {
  const calls: (keyof Gateway)[] = [];
  const use = <K extends keyof Gateway>(method: K): Gateway[K] => {
    calls.push(method);
    const answer = script[method];
    if (!answer) throw new Error(`the fake gateway was not told how to answer ${method}`);
    return answer;
  };
  return {
    calls,
    paymentLinkRequest: (order) => use('paymentLinkRequest')(order),
    createPaymentLink: (request, key) => use('createPaymentLink')(request, key),
    findPaymentLink: (id) => use('findPaymentLink')(id),
    deletePaymentLink: (id) => use('deletePaymentLink')(id),
    createSnap: (order, key) => use('createSnap')(order, key),
    charge: (order, key) => use('charge')(order, key),
    status: (id, o) => use('status')(id, o),
    cancel: (id) => use('cancel')(id),
    expire: (id) => use('expire')(id),
    refund: (id, refund) => use('refund')(id, refund),
    verifyNotification: (report, signature) => use('verifyNotification')(report, signature),
  };
}
