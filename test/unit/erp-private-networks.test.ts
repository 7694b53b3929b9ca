/** ERP_ALLOW_PRIVATE_NETWORKS: the ranges an on-premises ERP may be in, in production; never link-local or metadata. */
import { describe, expect, it } from 'vitest';
import { erpPrivatePolicy, loadConfig } from '../../src/config/env.js';
import { configProblems } from '../helpers/config.js';
import { AllowedNetworks, addressRefusal, cidrListProblem, outboundUrlProblem } from '../../src/platform/url-policy.js';
import { defaultRuntimeConfig } from '../../src/config/runtime.js';
import { effectiveProblems } from '../../src/domain/runtime-config.js';
import { STRONG_PRODUCTION_SECRETS } from '../helpers/strong-secrets.js';

const PRODUCTION = {
  NODE_ENV: 'production',
  log_user: 'ops',
  ...STRONG_PRODUCTION_SECRETS,
  MIDTRANS_MODE: 'production',
  MIDTRANS_SERVER_KEY: 'Mid-server-abc',
  PUBLIC_BASE_URL: 'https://pay.example.com',
};

const problems = configProblems;

describe('the allowed private networks', () => {
  const allowed = new AllowedNetworks(['10.20.0.0/16', '192.168.7.9', 'fd12:3456::/32']);

  it('contain addresses of their ranges, in any spelling of the address', () => {
    for (const a of [
      '10.20.0.1',
      '10.20.255.254',
      '192.168.7.9',
      '[fd12:3456::1]',
      'FD12:3456:0:0::9',
      '::ffff:10.20.3.4',
    ])
      expect(allowed.includes(a), a).toBe(true);
    for (const a of ['10.21.0.1', '192.168.7.10', 'fd12:3457::1', '127.0.0.1', 'erp.internal', '::ffff:10.21.0.1'])
      expect(allowed.includes(a), a).toBe(false);
  });

  it('connect time: a private address is allowed only inside them, and link-local or metadata never', () => {
    expect(addressRefusal('10.20.1.1', allowed)).toBeUndefined();
    expect(addressRefusal('10.21.1.1', allowed)).toBe('private');
    expect(addressRefusal('127.0.0.1', allowed)).toBe('private');
    expect(addressRefusal('localhost', allowed)).toBe('private');
    expect(addressRefusal('93.184.216.34', allowed)).toBeUndefined();
    const everything = new AllowedNetworks(['0.0.0.0/0', '::/0']);
    for (const a of [
      '169.254.169.254',
      'fe80::1',
      '::ffff:169.254.169.254',
      'fd00:ec2::254',
      'metadata.google.internal',
    ])
      expect(addressRefusal(a, everything), a).toBe('link-local');
    // Outside production (false) and with nothing allowed (true), as before.
    expect(addressRefusal('10.21.1.1', false)).toBeUndefined();
    expect(addressRefusal('10.20.1.1', true)).toBe('private');
  });

  it('configuration time: a production URL may name an address in them, never a link-local one', () => {
    expect(outboundUrlProblem('https://10.20.0.5/hook', true, allowed)).toBeUndefined();
    expect(outboundUrlProblem('https://[fd12:3456::5]/hook', true, allowed)).toBeUndefined();
    expect(outboundUrlProblem('https://10.21.0.5/hook', true, allowed)).toMatch(/private/);
    expect(outboundUrlProblem('https://10.20.0.5/hook', true)).toMatch(/private/);
    expect(outboundUrlProblem('http://10.20.0.5/hook', true, allowed)).toMatch(/https/);
    expect(outboundUrlProblem('https://169.254.169.254/', true, new AllowedNetworks(['169.254.0.0/16']))).toMatch(
      /link-local/,
    );
  });

  it('CIDR lists: ranges or single addresses; anything else is a problem', () => {
    expect(cidrListProblem(['10.0.0.0/8', '192.168.1.1', 'fd00::/8', '::1/128'])).toBeUndefined();
    for (const bad of [
      '10.0.0.0/33',
      '10.0.0/8',
      'erp.internal',
      '10.0.0.0/8/1',
      'fd00::/129',
      '',
      '10.0.0.0/-1',
      'fe80::1%eth0',
    ])
      expect(cidrListProblem([bad]), bad).toMatch(/CIDR/);
  });
});

describe('ERP_ALLOW_PRIVATE_NETWORKS in the environment', () => {
  it('a bad CIDR refuses to start, naming the variable but not the value', () => {
    for (const v of ['10.0.0.0/33', 'intranet', ',', '10.0.0.0/8,,bad'])
      expect(problems({ ERP_ALLOW_PRIVATE_NETWORKS: v }), v).toEqual([
        'ERP_ALLOW_PRIVATE_NETWORKS must list CIDR ranges such as 10.20.0.0/16, comma-separated',
      ]);
  });

  it('production: an ERP_NOTIFY_URL in the ranges starts; a gateway host in them does not', () => {
    const env = { ...PRODUCTION, ERP_ALLOW_PRIVATE_NETWORKS: ' 10.20.0.0/16 , 192.168.7.0/24 ' };
    const c = loadConfig({ ...env, ERP_NOTIFY_URL: 'https://10.20.0.5/paylink' });
    expect(c.erp.allowPrivateNetworks).toEqual(['10.20.0.0/16', '192.168.7.0/24']);
    const policy = erpPrivatePolicy(c);
    expect(policy instanceof AllowedNetworks && policy.includes('192.168.7.30')).toBe(true);
    expect(problems({ ...PRODUCTION, ERP_NOTIFY_URL: 'https://10.20.0.5/paylink' })).toEqual([
      'ERP_NOTIFY_URL must not point to a private, loopback or link-local address in production',
    ]);
    expect(problems({ ...env, MIDTRANS_API_BASE_URL: 'https://10.20.0.6' })).toEqual([
      'MIDTRANS_API_BASE_URL must not point to a private, loopback or link-local address in production',
    ]);
    // The same rule for /api/config: the ERP URL may be in the ranges, the gateway hosts may not.
    const doc = defaultRuntimeConfig(c, 'http://127.0.0.1:9');
    const judged = (erp: string, api: string) =>
      effectiveProblems(
        { ...doc, erp: { ...doc.erp, notify_url: erp }, gateway: { ...doc.gateway, api_base_url: api } },
        { production: true, simulatorAvailable: false, erpAllowed: new AllowedNetworks(c.erp.allowPrivateNetworks) },
      ).map((p) => p.path);
    expect(judged('https://10.20.9.9/hook', 'https://api.midtrans.com')).toEqual([]);
    expect(judged('https://10.20.9.9/hook', 'https://10.20.9.10')).toEqual(['gateway.api_base_url']);
    expect(judged('https://10.30.9.9/hook', 'https://api.midtrans.com')).toEqual(['erp.notify_url']);
  });

  it('outside production private addresses are allowed anyway; in production without the list, none is', () => {
    expect(erpPrivatePolicy(loadConfig({ ERP_ALLOW_PRIVATE_NETWORKS: '10.0.0.0/8' }))).toBe(false);
    expect(erpPrivatePolicy(loadConfig(PRODUCTION))).toBe(true);
  });
});
