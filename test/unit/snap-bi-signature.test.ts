/** The BI-SNAP signatures against the worked vectors of reference/bi-snap.md §10 (Midtrans' published sample key). */
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  bodyDigest,
  notificationSignature,
  tokenSignature,
  transactionSignature,
  verifyNotificationSignature,
  verifyTokenSignature,
  verifyTransactionSignature,
} from '../../src/gateway/snap-bi/signature.js';

const fixture = (name: string): string => readFileSync(new URL(`../fixtures/snap-bi/${name}`, import.meta.url), 'utf8');
const privateKey = fixture('midtrans-sample-private.pem');
const publicKey = fixture('midtrans-sample-public.pem');

describe('access-token signature (SHA256withRSA over clientId|timestamp)', () => {
  it('reproduces vector A (docs, +07:00 timestamp)', () => {
    const sig = tokenSignature('G1234325-SNAP', '2023-07-31T07:10:00+07:00', privateKey);
    expect(sig).toBe(
      'iv5YorKVVFOFS59l0HChDvPe+HeoE/jY5CfVgCg5i16nj5/DVnKg49ilkv8PyeU7y38apHhgO+cUrvkfUs5BhDD69yLn7xp8hzN9RcR0UDy5+nCrQ3GGCVSzZJvlEXN+TB0j4Q6pMsjrq4+YRoyDa4mTlsjJTU9aGjLRFBYgY4MyMQ5x11JyLnoFwbS8TJ5e/q4mUozrp49VyHe7OQSFnJNwvMSFrDyAIxoOK0IZQIlY29PaDIFcWoR+RJAY42H2FryjJcPpNfeercbkj9jsBLV3wmEKiNoN6lgFFLk5QicDnAAQzL45s92EYeCqDNuTTJOydaJbUqEo1d/ZPVNBtQ==',
    );
    expect(Buffer.from(sig, 'base64').toString('hex')).toMatch(/^8afe58a2b295.*5341b5$/);
    expect(verifyTokenSignature('G1234325-SNAP', '2023-07-31T07:10:00+07:00', sig, publicKey)).toBe(true);
    expect(verifyTokenSignature('G1234325-SNAP', '2023-07-31T07:10:01+07:00', sig, publicKey)).toBe(false);
  });

  it('reproduces vector B (UTC timestamp with milliseconds)', () => {
    expect(tokenSignature('G1234325-SNAP', '2024-03-01T08:27:49.024Z', privateKey)).toBe(
      'WzW49tYIgKIBmBi/gVBHGLAkhEaZlXM11zcZxAiyHji6TLPjPbwLu3Z45it25AIeG0XDItcdTSkds47zFEMh6IP0PXPIP1+Ey4RmX/o2fuYRF/xBHvfvKnMmANMTS1axsXBSW3EHqYpbVrkCcqNnB3u+wu63us9WIhRZaWgxgQ2PJLaiVHIwgu9u7jxkWX7Bg4rerZH3RKdQfIJAAJsSN13efR7VdSAyzU7QaKjgislxrLqmesYNJkbD03XLjHdo6YWuzAVV7xdZRpLiGkIAkW7luXTBZYBO+4oENZAPQYzrLeN1qRY1Sr7BgLONCA2QA26BB6SYW4R7qofS9+RyOQ==',
    );
  });

  it('refuses a signature that is not base64 or not made with the key', () => {
    expect(verifyTokenSignature('G1234325-SNAP', '2024-03-01T08:27:49.024Z', 'not base64!', publicKey)).toBe(false);
    expect(verifyTokenSignature('G1234325-SNAP', '2024-03-01T08:27:49.024Z', 'AAAA', publicKey)).toBe(false);
  });
});

describe('transactional signature (HMAC-SHA512)', () => {
  it('reproduces vector C (docs; the body behind the digest is not published)', () => {
    // The documented string to sign carries the digest itself, so the HMAC is checked over it.
    const stringToSign =
      'POST:/v1.0/debit/payment-host-to-host:gp9HjjEj813Y9JGoqwOeOPWbnt4CupvIJbU1Mmu4a11MNDZ7Sg5u9a:56fa5f4999ad8014de49d7898c1d1d53472569db8999de3c1b752a0dd181e98c:2020-01-01T00:00:00+07:00';
    expect(stringToSign).toHaveLength(183);
    expect(createHmac('sha512', 'fdppqbF5wq7vVegyvsV1CROMv646nJ7A').update(stringToSign).digest('base64')).toBe(
      'FSlidRHe4ow9qppNifGVQNcdv67lBjgCiP0BHylh+IKXo4fs2rHaGsFNUY0N8t0rPlZs4iAHAOCDklnCccwuJw==',
    );
  });

  it('reproduces vector D (a QRIS generate body, minified)', () => {
    const body =
      '{"partnerReferenceNo":"2020102900000000000001","amount":{"value":"12345678.00","currency":"IDR"},"feeAmount":{"value":"12345678.00","currency":"IDR"},"merchantId":"00007100010926","terminalId":"213141251124","validityPeriod":"2009-07-03T12:08:56-07:00"}';
    expect(bodyDigest(body)).toBe('01463f60dbb6ca538581579dd95b31c8ba9fc6600eca750e4d8460ca4e402111');
    const signing = {
      method: 'post',
      path: '/v1.0/qr/qr-mpm-generate',
      accessToken: 'myaccesstoken',
      body,
      timestamp: '2024-03-05T10:37:16.196Z',
    };
    const expected = 'wmzT7yjg1SxxCsxNsFgCR9SYXiZGGbceF6fV8xe97sAMHxZ+7OEBMIBmvb6Sj6GcksGp3iv77DiomgSbcST3XQ==';
    expect(transactionSignature(signing, 'myclientsecret')).toBe(expected);
    expect(verifyTransactionSignature(signing, 'myclientsecret', expected)).toBe(true);
    expect(verifyTransactionSignature({ ...signing, body: `${body} ` }, 'myclientsecret', expected)).toBe(false);
    expect(verifyTransactionSignature(signing, 'otherSecret', expected)).toBe(false);
  });

  it('hashes an empty body as the empty string', () => {
    expect(bodyDigest('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });
});

describe('notification signature (SHA256withRSA over the bytes received)', () => {
  const bodyE =
    '{"originalPartnerReferenceNo":"GP24043015193402809","originalReferenceNo":"A120240430081940S9vu8gSjaRID","merchantId":"G099333790","amount":{"value":"102800.00","currency":"IDR"},"latestTransactionStatus":"00","transactionStatusDesc":"SUCCESS","additionalInfo":{"refundHistory":[]}}';
  const sigE =
    'RoJnP2tH/YiOhHM/lMVBMSAuzRmS8VrWdIy04Qqyb56daV7oWFMFoMMzqnjQ+q0MIUalYgU094GWQnCx2c29xb1kkqHhv2+iJ9xl6NjGmFGYqyvcKvUDAV83Y1Mw9JnsEcjcupdGw9/MRv/mm2GMrQ+BCZGfc4a46JDyPZbcY294vDGqs5rFBN6iYer5ro4cAQGo9hET2G82Y+j50vCyO/79GFE4vB1rvtu6PK2Bxi+vTYV8k7P7PS8tOPWM2O+kjiVWjwvLR99Botou+a8sxlQqZaihfWMKcByzV+Lgkr9cptpjys+1NIRWT1ad/sJBSLHyldzC3q2oRn5z5oZmyg==';
  const received = {
    path: '/v1.0/debit/notify',
    rawBody: bodyE,
    timestamp: '2024-05-02T14:43:08+07:00',
    signature: sigE,
  };

  it('verifies vector E with the sample public key', () => {
    expect(bodyDigest(bodyE)).toBe('79ebbe6a6b695262dd686d0dedafc57c94e3b3dededf8d63971f8a95699ace85');
    expect(verifyNotificationSignature(received, publicKey)).toBe(true);
    expect(verifyNotificationSignature({ ...received, rawBody: Buffer.from(bodyE, 'utf8') }, publicKey)).toBe(true);
  });

  it('refuses the same body with one whitespace byte added, a re-serialised body, another path or timestamp', () => {
    expect(verifyNotificationSignature({ ...received, rawBody: bodyE.replace('":"00"', '": "00"') }, publicKey)).toBe(
      false,
    );
    expect(verifyNotificationSignature({ ...received, rawBody: `${bodyE}\n` }, publicKey)).toBe(false);
    expect(
      verifyNotificationSignature({ ...received, rawBody: JSON.stringify(JSON.parse(bodyE), null, 2) }, publicKey),
    ).toBe(false);
    expect(verifyNotificationSignature({ ...received, path: '/v1.0/qr/qr-mpm-notify' }, publicKey)).toBe(false);
    expect(verifyNotificationSignature({ ...received, timestamp: '2024-05-02T14:43:09+07:00' }, publicKey)).toBe(false);
  });

  it('reproduces vector F (the pretty-printed sample body, minified as sent)', () => {
    const pretty = fixture('notification-vector-f.json');
    const minified = JSON.stringify(JSON.parse(pretty));
    expect(bodyDigest(minified)).toBe('2ea1a3719499a0c45630f774b241a26a03d954fd8ab4a4d35cce05b5e37e4293');
    const sig = notificationSignature('/v1.0/debit/notify', minified, '2024-03-05T10:37:16.196Z', privateKey);
    expect(sig).toBe(
      'eUGsomFLNsjWzehgGsa317MqcVOgscay/Hml8yNmOsFhmoBM7pso+UPDgSe34anXvecSQkf5NOr0fbr8k9qdyyoWiYX7DTq/Wnz8XC0cRCCbNZfyLIyF33HO9cnvxOcRQq9DuWlQtld+uEluuivVdN2TiaWLpUTmfB/H7noZnXWWDj6FYa4n5kSo4o3aTeFYAF9EmLp0Tcsl8CiHSQCrQnIbB8M2+puLwyJ1l2OocvZ5qgjf5f2DqlCbemsSMzYzjN+YMrb0kiDx0TiW5UTk+WZass43xIfb3vdrlX+U2JSk5YsJ8lFpp9F+7FId4cyncElNFEbt3zWuP4iDzXteCg==',
    );
    const at = { path: '/v1.0/debit/notify', timestamp: '2024-03-05T10:37:16.196Z', signature: sig };
    expect(verifyNotificationSignature({ ...at, rawBody: minified }, publicKey)).toBe(true);
    expect(verifyNotificationSignature({ ...at, rawBody: pretty }, publicKey)).toBe(false);
  });
});
