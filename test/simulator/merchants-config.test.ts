import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { readStandaloneConfig, startSimulator } from '../../simulator/index.js';
import { KEY } from './helpers.js';

const B = { server_key: 'SB-Mid-server-env-b', merchant_id: 'G300000003' };

function errorsOf(merchants: unknown, env: Record<string, string> = {}): string[] {
  const text = typeof merchants === 'string' ? merchants : JSON.stringify(merchants);
  const r = readStandaloneConfig({ SIMULATOR_MERCHANTS: text, ...env });
  return 'errors' in r ? r.errors : [];
}

describe('SIMULATOR_MERCHANTS', () => {
  it('reads the merchants beside the default one', () => {
    const r = readStandaloneConfig({
      SIMULATOR_MERCHANTS: JSON.stringify([
        { ...B, client_key: 'SB-Mid-client-env-b', notification_url: 'http://127.0.0.1:9/b' },
        { server_key: 'SB-Mid-server-env-c', merchant_id: 'G300000004' },
      ]),
    });
    expect('config' in r && r.config.merchants).toEqual([
      {
        serverKey: 'SB-Mid-server-env-b',
        clientKey: 'SB-Mid-client-env-b',
        merchantId: 'G300000003',
        notificationUrl: 'http://127.0.0.1:9/b',
      },
      { serverKey: 'SB-Mid-server-env-c', merchantId: 'G300000004' },
    ]);
    const none = readStandaloneConfig({});
    expect('config' in none && none.config.merchants).toEqual([]);
  });

  it('refuses a bad list with a clear message naming the entry', () => {
    expect(errorsOf('[{')[0]).toMatch(/^SIMULATOR_MERCHANTS is not valid JSON/);
    expect(errorsOf({ ...B })).toEqual(['SIMULATOR_MERCHANTS must be a JSON array of merchants']);
    expect(errorsOf([B, 'x'])).toEqual([
      'SIMULATOR_MERCHANTS[1] must be an object {server_key, client_key?, merchant_id, notification_url?}',
    ]);
    expect(errorsOf([{ merchant_id: 'G1', server_key: 7, colour: 'red' }])).toEqual([
      "SIMULATOR_MERCHANTS[0]: unknown field 'colour'",
      'SIMULATOR_MERCHANTS[0]: server_key must be a string',
    ]);
    expect(errorsOf([{ server_key: 'k' }])).toEqual(['SIMULATOR_MERCHANTS[0]: merchant_id is required']);
    expect(
      errorsOf([B, { server_key: 'has space', merchant_id: 'G-1', notification_url: 'ftp://x', client_key: '' }]),
    ).toEqual([
      'SIMULATOR_MERCHANTS[1]: server_key must be non-empty without whitespace',
      'SIMULATOR_MERCHANTS[1]: client_key must be non-empty without whitespace',
      "SIMULATOR_MERCHANTS[1]: merchant_id must be 1-32 letters or digits (such as G123456789), got 'G-1'",
      "SIMULATOR_MERCHANTS[1]: notification_url must be an http(s) URL, got 'ftp://x'",
    ]);
  });

  it('refuses a key or MID that another merchant already has, without showing the key', () => {
    const errors = errorsOf(
      [
        { server_key: KEY, merchant_id: 'G300000005' },
        { ...B, client_key: 'SB-Mid-client-simulator' },
        { server_key: 'SB-Mid-server-env-d', merchant_id: 'G123456789' },
        { server_key: 'SB-Mid-server-env-b', merchant_id: 'G300000003' },
      ],
      { SIMULATOR_SERVER_KEY: KEY },
    );
    expect(errors).toEqual([
      'SIMULATOR_MERCHANTS[0]: server_key is already used by the default merchant (SIMULATOR_SERVER_KEY)',
      'SIMULATOR_MERCHANTS[3]: server_key is already used by SIMULATOR_MERCHANTS[1]',
      'SIMULATOR_MERCHANTS[1]: client_key is already used by the default merchant (SIMULATOR_SERVER_KEY)',
      'SIMULATOR_MERCHANTS[2]: merchant_id is already used by the default merchant (SIMULATOR_SERVER_KEY)',
      'SIMULATOR_MERCHANTS[3]: merchant_id is already used by SIMULATOR_MERCHANTS[1]',
    ]);
    expect(errors.join('\n')).not.toContain(KEY);
  });

  it('the standalone entry prints the message and exits with 1', async () => {
    const { code, out } = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'simulator/main.ts'], {
        env: { ...process.env, SIMULATOR_PORT: '0', SIMULATOR_MERCHANTS: '[{"server_key":"k"}]' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let text = '';
      child.stdout.on('data', (d: Buffer) => (text += d.toString()));
      child.stderr.on('data', (d: Buffer) => (text += d.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      child.on('exit', (exit) => {
        clearTimeout(timer);
        resolve({ code: exit, out: text });
      });
    });
    expect(code).toBe(1);
    expect(out).toContain('simulator: SIMULATOR_MERCHANTS[0]: merchant_id is required');
  });
});

describe('embedded merchant options', () => {
  it('refuses a shared key or MID, or a bad URL, naming the entry', async () => {
    await expect(
      startSimulator({
        serverKey: KEY,
        merchants: [
          { serverKey: KEY, merchantId: 'G400000001' },
          { serverKey: 'SB-Mid-server-opt-b', merchantId: 'G123456789', notificationUrl: 'nope' },
        ],
      }),
    ).rejects.toThrow(
      "simulator: merchants[1]: notification_url must be an http(s) URL, got 'nope'; " +
        'merchants[0]: server_key is already used by the default merchant; ' +
        'merchants[1]: merchant_id is already used by the default merchant',
    );
  });
});
