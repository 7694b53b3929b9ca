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
    // Which API carries a charge is asked before every charge; unscripted, the legacy one, unlisted.
    carrierFor: (type) => (script.carrierFor ? use('carrierFor')(type) : Promise.resolve('legacy')),
    charge: (order, key) => use('charge')(order, key),
    status: (id, o) => use('status')(id, o),
    cancel: (id, o) => use('cancel')(id, o),
    expire: (id, o) => use('expire')(id, o),
    refund: (id, refund, o) => use('refund')(id, refund, o),
    verifyNotification: (report, signature) => use('verifyNotification')(report, signature),
  };
}
