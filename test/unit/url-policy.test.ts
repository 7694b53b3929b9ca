import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  addressRefusal,
  embeddedIpv4,
  isLinkLocalOrMetadata,
  isPrivateHost,
  outboundUrlProblem,
} from '../../src/platform/url-policy.js';

type V4 = [number, number, number, number];
const byte = fc.integer({ min: 0, max: 255 });
const hex = (a: number, b: number) => ((a << 8) | b).toString(16);

/** Every IPv6 spelling of an IPv4 address that reaches it or stands for it, in the forms a URL or a resolver may carry. */
function ipv6Spellings([a, b, c, d]: V4, noise: number): string[] {
  const h = `${hex(a, b)}:${hex(c, d)}`;
  const q = `${a}.${b}.${c}.${d}`;
  const n = (noise & 0xffff).toString(16);
  const inverted = `${hex(a ^ 0xff, b ^ 0xff)}:${hex(c ^ 0xff, d ^ 0xff)}`;
  return [
    `::ffff:${h}`, // IPv4-mapped
    `::ffff:${q}`,
    `0:0:0:0:0:ffff:${h}`,
    `0000:0000:0000:0000:0000:FFFF:${h.toUpperCase()}`,
    `::${h}`, // IPv4-compatible
    `::${q}`,
    `::ffff:0:${h}`, // IPv4-translated
    `64:ff9b::${h}`, // NAT64, well-known prefix
    `64:ff9b::${q}`,
    `64:ff9b:0:0:0:0:${h}`,
    `64:ff9b:1::${h}`, // NAT64, local-use prefix (/96 position)
    `64:ff9b:1:${n}::${h}`,
    `64:ff9b:1:${hex(a, b)}:${c.toString(16)}:${(d << 8).toString(16)}::`, // NAT64 /48 position: a.b at bits 48-63, c.d at 72-87
    `2002:${h}::`, // 6to4
    `2002:${h}:${n}::1`,
    `2001:0:${h}::${inverted}`, // Teredo: its server…
    `2001:0:4136:e378:8000:${n}:${inverted}`, // …and its client, stored inverted
  ];
}

const metadata4 = fc.oneof(
  fc.tuple(fc.constant(169), fc.constant(254), byte, byte),
  fc.constantFrom<V4>([169, 254, 169, 254], [100, 100, 100, 200], [168, 63, 129, 16], [192, 0, 0, 192]),
);
const private4 = fc.oneof(
  fc.tuple(fc.constant(127), byte, byte, byte),
  fc.tuple(fc.constant(10), byte, byte, byte),
  fc.tuple(fc.constant(192), fc.constant(168), byte, byte),
  fc.tuple(fc.constant(172), fc.integer({ min: 16, max: 31 }), byte, byte),
  fc.tuple(fc.constant(100), fc.integer({ min: 64, max: 127 }), byte, byte),
  fc.tuple(fc.constant(0), byte, byte, byte),
);
// Plainly public unicast ranges (no reserved block starts inside them).
const public4 = fc.oneof(
  fc.tuple(fc.integer({ min: 1, max: 9 }), byte, byte, byte),
  fc.tuple(fc.integer({ min: 11, max: 99 }), byte, byte, byte),
  fc.tuple(fc.integer({ min: 128, max: 168 }), byte, byte, byte),
);

const urlOf = (v6: string) => `https://[${v6}]:8443/v2`;

describe('outbound address policy: every spelling of a refused address is refused', () => {
  it('link-local and metadata IPv4 addresses in any IPv6 spelling: refused in every mode, as literals and as resolved addresses', () => {
    fc.assert(
      fc.property(metadata4, fc.integer(), (v4, noise) => {
        for (const v6 of ipv6Spellings(v4, noise)) {
          expect(isLinkLocalOrMetadata(v6), v6).toBe(true);
          expect(addressRefusal(v6, false), v6).toBe('link-local');
          expect(outboundUrlProblem(urlOf(v6), false), v6).toBe(
            'must not point to a link-local or cloud metadata address',
          );
          expect(isLinkLocalOrMetadata(new URL(urlOf(v6)).hostname), v6).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('loopback and private IPv4 addresses in any IPv6 spelling: refused in production, allowed outside it', () => {
    fc.assert(
      fc.property(private4, fc.integer(), (v4, noise) => {
        for (const v6 of ipv6Spellings(v4, noise)) {
          expect(isPrivateHost(v6), v6).toBe(true);
          // Inside the local-use NAT64 /48 one address spells an IPv4 address at each RFC 6052
          // position; when another position spells a link-local one, the stricter refusal wins.
          if (isLinkLocalOrMetadata(v6)) {
            expect([addressRefusal(v6, true), addressRefusal(v6, false)], v6).toEqual(['link-local', 'link-local']);
            continue;
          }
          expect(addressRefusal(v6, true), v6).toBe('private');
          expect(addressRefusal(v6, false), v6).toBeUndefined();
          expect(outboundUrlProblem(urlOf(v6), true), v6).toMatch(/private, loopback or link-local/);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('an address spelling loopback at one NAT64 position and link-local at another is refused as link-local in every mode', () => {
    // 127.0.169.254 at the /48 position (u-octet skipped) reads 169.254.0.0 at the /64 position.
    const v6 = '64:ff9b:1:7f00:a9:fe00::';
    expect(isPrivateHost(v6)).toBe(true);
    expect(isLinkLocalOrMetadata(v6)).toBe(true);
    expect([addressRefusal(v6, true), addressRefusal(v6, false)]).toEqual(['link-local', 'link-local']);
  });

  it('public IPv4 addresses behind NAT64, 6to4, Teredo or the mapped form stay allowed (a DNS64 network reaches the gateway so)', () => {
    fc.assert(
      fc.property(public4, fc.integer(), (v4, noise) => {
        const [a, b, c, d] = v4;
        const h = `${hex(a, b)}:${hex(c, d)}`;
        for (const v6 of [`::ffff:${h}`, `64:ff9b::${h}`, `2002:${h}:${(noise & 0xffff).toString(16)}::1`]) {
          expect(addressRefusal(v6, true), v6).toBeUndefined();
          expect(outboundUrlProblem(urlOf(v6), true), v6).toBeUndefined();
        }
      }),
      { numRuns: 300 },
    );
  });

  it('the IPv6 ranges themselves: loopback, unspecified, unique-local, link-local, site-local, multicast, local-use NAT64, documentation', () => {
    for (const v6 of [
      '::1',
      '0:0:0:0:0:0:0:1',
      '::',
      'fc00::1',
      'fd12:3456::1',
      'fec0::1',
      'ff02::1',
      '64:ff9b:1::1',
      '100::1',
      '2001:db8::1',
      '3fff::1',
    ]) {
      expect(addressRefusal(v6, true), v6).toBe('private');
      expect(addressRefusal(v6, false), v6).toBeUndefined();
    }
    for (const v6 of ['fe80::1', 'FE80::1%eth0', 'febf:ffff::1', 'fd00:ec2::254', 'fd20:ce::254']) {
      expect(addressRefusal(v6, false), v6).toBe('link-local');
    }
    for (const v6 of ['2a00:1450:4001:82b::200e', '2606:4700::6810:84e5'])
      expect(addressRefusal(v6, true), v6).toBeUndefined();
  });

  it('names the probe used: the metadata address as IPv4-compatible and as NAT64', () => {
    expect(embeddedIpv4('::a9fe:a9fe')).toContain('169.254.169.254');
    expect(embeddedIpv4('64:ff9b::a9fe:a9fe')).toContain('169.254.169.254');
    for (const url of [
      'http://[::a9fe:a9fe]/',
      'http://[64:ff9b::a9fe:a9fe]/',
      'http://[::ffff:169.254.169.254]/',
      'http://[2002:a9fe:a9fe::]/',
    ]) {
      expect(outboundUrlProblem(url, false), url).toBe('must not point to a link-local or cloud metadata address');
    }
  });
});
