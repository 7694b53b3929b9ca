/**
 * The deployment files, read as a machine would: the compose file's services, health checks,
 * volumes and order, and that everything it passes to paylink is a variable of the configuration;
 * the systemd unit's hardening (and `systemd-analyze verify` where it runs); .env.example against
 * the configuration schema.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { EnvSchema } from '../../src/config/env.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (f: string) => fs.readFileSync(path.join(ROOT, f), 'utf8');
const SCHEMA = new Set(Object.keys(EnvSchema.properties));

interface Service {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  volumes?: string[];
  ports?: string[];
  restart?: string;
}

const composeText = read('deploy/compose.yaml');
const compose = parse(composeText, { merge: true }) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
};
/** Variables compose substitutes from the environment or --env-file. */
const interpolated = new Set([...composeText.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1] ?? ''));
const envExampleNames = [...read('.env.example').matchAll(/^#? ?([A-Za-z_][A-Za-z0-9_]*)=/gm)].map((m) => m[1] ?? '');

describe('deploy/compose.yaml', () => {
  const { postgres, migrate, paylink } = compose.services;

  it('has the services paylink, migrate and postgres, and nothing else', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['migrate', 'paylink', 'postgres']);
  });

  it('keeps PostgreSQL in a named volume, healthy once pg_isready answers', () => {
    expect(postgres?.volumes).toContain('pgdata:/var/lib/postgresql/data');
    expect(Object.keys(compose.volumes)).toContain('pgdata');
    expect(postgres?.healthcheck?.test.join(' ')).toMatch(/pg_isready/);
  });

  it('runs paylink migrate once PostgreSQL is healthy, and paylink only after it succeeded', () => {
    expect(migrate?.command).toEqual(['paylink', 'migrate']);
    expect(migrate?.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    expect(migrate?.restart).toBe('no');
    expect(paylink?.command).toEqual(['paylink', 'serve']);
    expect(paylink?.depends_on).toEqual({
      postgres: { condition: 'service_healthy' },
      migrate: { condition: 'service_completed_successfully' },
    });
    expect(paylink?.healthcheck?.test.join(' ')).toMatch(/\/health\/ready/);
  });

  it('can run two paylink instances: PostgreSQL, and a port range rather than one fixed host port', () => {
    expect(paylink?.environment?.DATABASE_URL).toMatch(
      /^postgres:\/\/paylink:\$\{POSTGRES_PASSWORD[^}]*\}@postgres:5432\/paylink$/,
    );
    expect(paylink?.ports).toEqual(['127.0.0.1:3000-3001:3000']);
    expect(paylink?.volumes, 'no volume shared between instances').toBeUndefined();
  });

  it('passes paylink and migrate the same environment, every variable of which is in the configuration schema', () => {
    expect(migrate?.environment).toEqual(paylink?.environment);
    const passed = Object.keys(paylink?.environment ?? {});
    expect(passed.filter((n) => !SCHEMA.has(n))).toEqual([]);
    expect(paylink?.environment?.NODE_ENV).toBe('production');
  });

  it('every variable it reads from .env is in .env.example', () => {
    expect([...interpolated].filter((n) => !envExampleNames.includes(n))).toEqual([]);
  });
});

describe('.env.example', () => {
  it('lists every variable of the configuration schema once, and otherwise only what compose reads', () => {
    expect(new Set(envExampleNames).size, 'each variable once').toBe(envExampleNames.length);
    expect([...SCHEMA].filter((n) => !envExampleNames.includes(n))).toEqual([]);
    const extra = envExampleNames.filter((n) => !SCHEMA.has(n));
    expect(extra.filter((n) => !interpolated.has(n))).toEqual([]);
    expect(extra.sort()).toEqual(['PAYLINK_IMAGE', 'POSTGRES_IMAGE', 'POSTGRES_PASSWORD']);
  });
});

describe('deploy/systemd/paylink.service', () => {
  const text = read('deploy/systemd/paylink.service');
  const service = new Map<string, string[]>();
  let section = '';
  for (const line of text.split('\n')) {
    const s = /^\[(.+)\]$/.exec(line.trim());
    if (s?.[1]) section = s[1];
    const kv = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (section === 'Service' && kv?.[1] !== undefined)
      service.set(kv[1], [...(service.get(kv[1]) ?? []), kv[2] ?? '']);
  }
  const one = (k: string) => service.get(k)?.at(-1);

  it('runs paylink serve as a user of its own, restarted on failure, configured by an EnvironmentFile', () => {
    expect(one('User')).toBe('paylink');
    expect(one('ExecStart')).toMatch(/bin\/paylink\.js serve$/);
    expect(one('Restart')).toBe('on-failure');
    expect(one('EnvironmentFile')).toBe('/etc/paylink/paylink.env');
    expect(one('KillSignal')).toBe('SIGTERM');
  });

  it('is hardened, writing only its data and log directories, which are DATA_DIR and LOG_DIR', () => {
    expect(one('NoNewPrivileges')).toBe('yes');
    expect(one('ProtectSystem')).toBe('strict');
    expect(one('PrivateTmp')).toBe('yes');
    expect(one('ProtectHome')).toBe('yes');
    expect(one('CapabilityBoundingSet')).toBe('');
    const writable = (one('ReadWritePaths') ?? '').split(/\s+/);
    expect(writable.sort()).toEqual(['/var/lib/paylink', '/var/log/paylink']);
    const env = one('Environment') ?? '';
    expect(env).toContain('DATA_DIR=/var/lib/paylink');
    expect(env).toContain('LOG_DIR=/var/log/paylink');
    expect(env).toContain('NODE_ENV=production');
  });

  it.runIf(fs.existsSync('/usr/bin/systemd-analyze') && fs.existsSync('/usr/bin/node'))(
    'passes systemd-analyze verify without a warning',
    () => {
      // verify exits 0 on unknown keys but names them on stderr: any output is a finding.
      const r = spawnSync('systemd-analyze', ['verify', path.join(ROOT, 'deploy/systemd/paylink.service')], {
        encoding: 'utf8',
      });
      expect(r.stdout + r.stderr).toBe('');
      expect(r.status).toBe(0);
    },
  );
});

describe('the image version label', () => {
  const dockerfile = read('Dockerfile');
  const imageSh = read('.ci/image.sh');
  const version = (JSON.parse(read('package.json')) as { version: string }).version;

  it('comes from package.json only: the Dockerfile labels the VERSION build arg, which .ci/image.sh takes from package.json and checks on the image', () => {
    expect(dockerfile).toMatch(/org\.opencontainers\.image\.version="\$\{VERSION\}"/);
    // No second copy of the version anywhere in the build files.
    expect(dockerfile).not.toContain(version);
    expect(imageSh).not.toContain(version);
    expect(imageSh).toContain(`VERSION="$(node -p 'require("./package.json").version')"`);
    expect(imageSh).toContain('--build-arg VERSION="$VERSION"');
    expect(imageSh).toContain(
      `[ "$(inspect '{{index .Config.Labels "org.opencontainers.image.version"}}')" = "$VERSION" ]`,
    );
    expect(spawnSync('bash', ['-n', path.join(ROOT, '.ci/image.sh')]).status).toBe(0);
  });

  it("the Dockerfile's guard refuses a VERSION other than package.json's, and accepts it or none", () => {
    const guard = /^RUN (node -e '.*')$/m.exec(dockerfile)?.[1];
    expect(guard).toBeDefined();
    const run = (v: string) =>
      spawnSync('bash', ['-c', (guard ?? '').replace('/app/package.json', path.join(ROOT, 'package.json'))], {
        env: { PATH: process.env.PATH ?? '', VERSION: v },
        encoding: 'utf8',
      });
    expect(run(version).status).toBe(0);
    expect(run('unknown').status).toBe(0);
    const stale = run('0.0.1-stale');
    expect(stale.status).toBe(1);
    expect(stale.stderr).toContain(`VERSION=0.0.1-stale but package.json says ${version}`);
  });
});
