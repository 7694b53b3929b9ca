/**
 * The `paylink` command (the package's bin, `npx paylink` in a checkout, the image's entry point).
 * Exit codes: 0 ok, 1 a problem found (configuration, database, backup), 2 bad usage.
 * Each command is loaded when chosen, so `--help` and `check-config` start without the server.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadEnvFile } from './cli/env-file.js';
import { VERSION } from './platform/version.js';

export const EXIT = { ok: 0, problem: 1, usage: 2 } as const;

const USAGE = `Usage: paylink <command> [options]

Commands:
  serve          run the service (what npm start runs)
  migrate        apply the database migrations and exit
  check-config   check the environment against the go-live rules, listing every problem
  backup FILE    write a consistent copy of the SQLite database to FILE, also while the service runs
  simulator      run the Midtrans simulator alone
  operators      add, list, change the role of, disable or unlock operators

Options:
  -h, --help     show this text, or a command's: paylink <command> --help
  -v, --version  show the version

Every command reads its configuration from the environment. A .env file in the working directory
is read first; a variable already set in the environment wins over the file.

Exit codes: 0 ok, 1 a problem found, 2 bad usage.
`;

const HELP: Record<string, string> = {
  serve: `Usage: paylink serve

Runs the service: the HTTP API, the webhook, the operator console and the background workers (and
the embedded gateway simulator in simulator mode). Stops on SIGTERM or SIGINT after draining
requests. Exits 1 when the configuration is invalid or the start fails.
`,
  migrate: `Usage: paylink migrate

Applies every pending database migration and exits: a deploy step before new instances start.
Migrations only go forward. With SQLite, the service must not be running (it holds the file).
Exits 1 when the configuration is invalid or a migration fails.
`,
  'check-config': `Usage: paylink check-config [--allow-sandbox]

Checks the environment as production reads it (whatever NODE_ENV says) plus the go-live rules:
production gateway keys, PUBLIC_BASE_URL reachable by the gateway, ERP URL and secret, TLS proxy
named in TRUST_PROXY. Prints every problem, then what to confirm by hand. Exits 1 on any problem.

  --allow-sandbox  accept sandbox mode and keys (a staging environment)
`,
  backup: `Usage: paylink backup FILE

Writes a consistent copy of the SQLite database (DATA_DIR/paylink.db) to FILE, which must not
exist, while the service keeps running; the copy is checked with PRAGMA integrity_check before it
is given its name. With PostgreSQL (DATABASE_URL) nothing is copied: the pg_dump command to use is
printed and the exit code is 1.
`,
  operators: `Usage: paylink operators <add|list|set-role|disable|enable|unlock> …

  add NAME --role=ROLE [--accounts=ID,…]   add an operator; a generated password is printed once
  list                                     the operators, their roles, and whether disabled or locked
  set-role NAME ROLE                       change an operator's role (viewer, finance, admin)
  disable NAME | enable NAME               disabling ends the operator's sessions at once
  unlock NAME                              lift a sign-in lock (also of the operator of log_user)

With SQLite the service must be stopped (it holds the file); with PostgreSQL it may run.
Exits 1 when the operator is unknown or the request is refused, 2 on bad usage.
`,
  simulator: `Usage: paylink simulator

Runs the Midtrans simulator alone. Environment: SIMULATOR_PORT (3001), SIMULATOR_HOST (127.0.0.1),
SIMULATOR_SERVER_KEY, SIMULATOR_CLIENT_KEY, SIMULATOR_NOTIFICATION_URL, SIMULATOR_TIME_SCALE.
`,
};

export interface CliIo {
  out: (text: string) => void;
  err: (text: string) => void;
}

const stdio: CliIo = { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) };

/**
 * Runs one command. Resolves with the exit code, or with `serving` once `serve` or `simulator`
 * started (the process then lives until a signal stops it).
 */
export async function main(
  argv: readonly string[],
  o: { env?: Record<string, string | undefined>; io?: CliIo; envFile?: string } = {},
): Promise<number | 'serving'> {
  const env = o.env ?? process.env;
  const io = o.io ?? stdio;
  const [command, ...rest] = argv;
  if (command === undefined) {
    io.err(USAGE);
    return EXIT.usage;
  }
  if (command === '-h' || command === '--help' || command === 'help') {
    io.out(USAGE);
    return EXIT.ok;
  }
  if (command === '-v' || command === '--version') {
    io.out(`${VERSION}\n`);
    return EXIT.ok;
  }
  const help = HELP[command];
  if (help === undefined) {
    io.err(`paylink: unknown command "${command}"\n\n${USAGE}`);
    return EXIT.usage;
  }
  if (rest.includes('-h') || rest.includes('--help')) {
    io.out(help);
    return EXIT.ok;
  }
  if (command === 'operators') return runOperators(env, rest, io, o.envFile);
  const flags = rest.filter((a) => a.startsWith('-'));
  const args = rest.filter((a) => !a.startsWith('-'));
  const allowedFlags = command === 'check-config' ? ['--allow-sandbox'] : [];
  const unknownFlag = flags.find((f) => !allowedFlags.includes(f));
  const wantedArgs = command === 'backup' ? 1 : 0;
  if (unknownFlag !== undefined || args.length !== wantedArgs) {
    io.err(
      `paylink ${command}: ${unknownFlag !== undefined ? `unknown option ${unknownFlag}` : wantedArgs === 1 ? 'expects one FILE' : `takes no argument (got "${args.join(' ')}")`}\n\n${help}`,
    );
    return EXIT.usage;
  }

  loadEnvFile(o.envFile ?? path.resolve('.env'), env);
  switch (command) {
    case 'serve': {
      // Before the server's modules: the instrumentations must see Fastify, pg and pino imported.
      const { startTracing, TracingConfigError } = await import('./platform/tracing.js');
      try {
        await startTracing(env);
      } catch (err) {
        if (err instanceof TracingConfigError) {
          io.err(`paylink: ${err.message}\n`);
          return EXIT.problem;
        }
        throw err;
      }
      const { serve } = await import('./server.js');
      await serve(env);
      return 'serving';
    }
    case 'simulator': {
      // The simulator reads process.env itself: what .env set above is there too when env is process.env.
      const { runStandalone } = await import('../simulator/index.js');
      await runStandalone();
      return 'serving';
    }
    case 'check-config':
      return runCheckConfig(env, flags.includes('--allow-sandbox'), io);
    case 'migrate':
      return runMigrate(env, io);
    default:
      return runBackup(env, args[0] ?? '', io);
  }
}

async function runOperators(
  env: Record<string, string | undefined>,
  argv: readonly string[],
  io: CliIo,
  envFile: string | undefined,
): Promise<number> {
  const { parseOperatorsCommand, operatorsCommand, problemText, OperatorsUsageError } =
    await import('./cli/operators.js');
  let command;
  try {
    command = parseOperatorsCommand(argv);
  } catch (err) {
    if (!(err instanceof OperatorsUsageError)) throw err;
    io.err(`paylink operators: ${err.message}\n\n${HELP.operators ?? ''}`);
    return EXIT.usage;
  }
  loadEnvFile(envFile ?? path.resolve('.env'), env);
  const config = await configOrProblem(env, io, 'operators');
  if (!config) return EXIT.problem;
  try {
    io.out(await operatorsCommand(config, command));
    return EXIT.ok;
  } catch (err) {
    const text = problemText(err) ?? (err instanceof Error ? err.message : String(err));
    io.err(`paylink operators: ${text}\n`);
    return EXIT.problem;
  }
}

async function runCheckConfig(
  env: Record<string, string | undefined>,
  allowSandbox: boolean,
  io: CliIo,
): Promise<number> {
  const { checkConfig } = await import('./cli/check-config.js');
  const report = checkConfig(env, { allowSandbox });
  const list = (items: string[]) => items.map((i) => `  - ${i}\n`).join('');
  if (report.problems.length > 0) {
    io.out(
      `paylink check-config: ${report.problems.length} problem${report.problems.length === 1 ? '' : 's'}\n${list(report.problems)}`,
    );
  } else {
    const c = report.config;
    io.out(
      `paylink check-config: no problem found (gateway ${c?.gateway.mode ?? '?'}, database ${c?.database.kind ?? '?'}, public URL ${c?.publicBaseUrl ?? '?'})\n`,
    );
  }
  io.out(`Confirm by hand before going live:\n${list(report.toConfirm)}`);
  return report.problems.length > 0 ? EXIT.problem : EXIT.ok;
}

async function configOrProblem(env: Record<string, string | undefined>, io: CliIo, command: string) {
  const { loadConfig, ConfigError } = await import('./config/env.js');
  try {
    return loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      io.err(`paylink ${command}: ${err.message}\n`);
      return undefined;
    }
    throw err;
  }
}

async function runMigrate(env: Record<string, string | undefined>, io: CliIo): Promise<number> {
  const config = await configOrProblem(env, io, 'migrate');
  if (!config) return EXIT.problem;
  const { migrateDatabase } = await import('./cli/migrate.js');
  try {
    const status = await migrateDatabase(config);
    const at = status.run.latest ?? 'no migration';
    const n = status.run.applied.length;
    io.out(
      n > 0
        ? `paylink migrate: applied ${n} migration${n === 1 ? '' : 's'} to the ${config.database.kind} database (now at ${at})\n`
        : `paylink migrate: the ${config.database.kind} database is already up to date (${at})\n`,
    );
    if (status.unknown.length > 0)
      io.out(
        `  it also has migrations of a newer version (${status.unknown.join(', ')}); this version runs beside them\n`,
      );
    return EXIT.ok;
  } catch (err) {
    io.err(`paylink migrate: ${err instanceof Error ? err.message : String(err)}\n`);
    return EXIT.problem;
  }
}

async function runBackup(env: Record<string, string | undefined>, file: string, io: CliIo): Promise<number> {
  const config = await configOrProblem(env, io, 'backup');
  if (!config) return EXIT.problem;
  const { backupSqlite, pgDumpLine, BackupError } = await import('./cli/backup.js');
  if (config.database.kind === 'postgres') {
    io.err(
      "paylink backup: the database is PostgreSQL; nothing was copied. Take the backup with pg_dump (its version at least the server's):\n",
    );
    io.out(`${pgDumpLine(file)}\n`);
    return EXIT.problem;
  }
  try {
    const started = performance.now();
    const result = backupSqlite(config.database.path, file);
    io.out(
      `paylink backup: ${result.file} written (${result.bytes} bytes, integrity ok, ${Math.round(performance.now() - started)} ms)\n`,
    );
    return EXIT.ok;
  } catch (err) {
    if (err instanceof BackupError) {
      io.err(`paylink backup: ${err.message}\n`);
      return EXIT.problem;
    }
    throw err;
  }
}

// `node --import tsx src/cli.ts …` (tests, a checkout without a build); bin/paylink.js runs the built copy.
const isEntry = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isEntry) {
  const code = await main(process.argv.slice(2));
  if (typeof code === 'number') process.exitCode = code;
}
