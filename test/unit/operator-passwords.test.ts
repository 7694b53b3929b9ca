import { describe, expect, it } from 'vitest';
import { generatePassword, hashPassword, verifyPassword } from '../../src/domain/operators/passwords.js';
import { hasRole, requireRole } from '../../src/domain/operators/access.js';
import { AppError } from '../../src/platform/errors.js';

describe('operator passwords', () => {
  it('are kept as salted scrypt hashes with their parameters, and verify only the right password', async () => {
    const a = await hashPassword('correct horse battery');
    const b = await hashPassword('correct horse battery');
    expect(a).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(a).not.toBe(b);
    expect(await verifyPassword('correct horse battery', a)).toBe(true);
    expect(await verifyPassword('correct horse batterY', a)).toBe(false);
    expect(await verifyPassword('', a)).toBe(false);
  });

  it('refuses a stored string with parameters out of bounds instead of running it', async () => {
    const good = await hashPassword('another long password');
    const [, , , , salt, key] = good.split('$');
    for (const bad of [
      `scrypt$${2 ** 24}$8$1$${salt}$${key}`,
      `scrypt$1000$8$1$${salt}$${key}`,
      `scrypt$32768$64$1$${salt}$${key}`,
      `bcrypt$32768$8$1$${salt}$${key}`,
      'not a hash',
    ])
      expect(await verifyPassword('another long password', bad), bad).toBe(false);
  });

  it('generates passwords of 24 characters, each different', () => {
    const seen = new Set(Array.from({ length: 50 }, generatePassword));
    expect(seen.size).toBe(50);
    for (const p of seen) expect(p).toMatch(/^[A-Za-z0-9_-]{24}$/);
  });
});

describe('roles', () => {
  const op = (role: 'viewer' | 'finance' | 'admin') => ({ kind: 'operator' as const, user: 'x', role });
  it('rank viewer < finance < admin; the API key and the command line pass; anonymous never does', () => {
    expect(hasRole(op('viewer'), 'viewer')).toBe(true);
    expect(hasRole(op('viewer'), 'finance')).toBe(false);
    expect(hasRole(op('finance'), 'finance')).toBe(true);
    expect(hasRole(op('finance'), 'admin')).toBe(false);
    expect(hasRole(op('admin'), 'admin')).toBe(true);
    expect(hasRole({ kind: 'api', account: 'default' }, 'finance')).toBe(true);
    expect(hasRole({ kind: 'cli' }, 'admin')).toBe(true);
    expect(hasRole({ kind: 'anonymous' }, 'viewer')).toBe(false);
    try {
      requireRole(op('viewer'), 'admin');
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      expect(err).toMatchObject({ code: 'FORBIDDEN', status: 403 });
    }
  });
});
