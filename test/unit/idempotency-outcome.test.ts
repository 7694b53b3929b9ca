import { describe, expect, it } from 'vitest';
import { isOutcome } from '../../src/http/plugins/idempotency.js';

describe('which answers an Idempotency-Key keeps', () => {
  it('keeps successes and refusals of the request itself', () => {
    expect(isOutcome(201, undefined)).toBe(true);
    expect(isOutcome(409, 'PAYMENT_NOT_PAID')).toBe(true);
    expect(isOutcome(422, 'REFUND_NOT_SUPPORTED')).toBe(true);
  });
  it('does not keep a passing condition: the same key tries again', () => {
    expect(isOutcome(409, 'IDEMPOTENCY_IN_FLIGHT')).toBe(false);
    expect(isOutcome(409, 'REFUND_IN_PROGRESS')).toBe(false);
    expect(isOutcome(503, 'DATABASE_UNAVAILABLE')).toBe(false);
    expect(isOutcome(429, 'TOO_MANY_REQUESTS')).toBe(false);
  });
});
