import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { parseSecretKey } from './crypto/secret-box.js';

/** Integration keys the service knows (docs/webhooks.md, "Integrations"). */
export const INTEGRATION_KEYS = [
  'social_one.native',
  'social_two.native',
  'aggregator',
  'whatsapp',
  'whatsapp_session',
  'sms',
  'email',
  'livechat',
  'ai',
  'sms.twilio',
  'whatsapp_session.waha',
  'telegram',
  'email.postmark',
  'email.mailgun',
  'email.imap',
] as const;
export type IntegrationKey = (typeof INTEGRATION_KEYS)[number];

/** Per-integration settings, named as docs/webhooks.md names them. */
export interface IntegrationConfig {
  appSecret?: string;
  webhookVerifyToken?: string;
  webhookSecret?: string;
  providerReportSecret?: string;
  skipVerify?: boolean;
  apiBaseUrl?: string;
  accessToken?: string;
  /** sms: the provider account the Messages API is called for, when a connection sets none. */
  accountSid?: string;
  /** sms.twilio: the account's auth token; it verifies X-Twilio-Signature and is the default send password. */
  authToken?: string;
}

export interface Config {
  production: boolean;
  databaseUrl: string | undefined;
  /**
   * DATABASE_REPLICA_URL: a streaming replica of DATABASE_URL that lists, search, reports and
   * exports read from while it keeps up (docs/operations.md, "A read replica").
   */
  databaseReplicaUrl: string | undefined;
  /** A replica further behind the primary than this many milliseconds is not read (INBOX_REPLICA_MAX_LAG_MS). */
  replicaMaxLagMs: number;
  dataDir: string;
  port: number;
  host: string;
  /**
   * The base URL the world reaches the service at (INBOX_PUBLIC_URL), without a trailing
   * slash: providers that sign the URL they called (Twilio) are checked against it, and
   * webhook URLs handed to providers are built from it. Unset: `http://HOST:PORT`.
   */
  publicUrl: string;
  /** Absent means "generate once and keep in the data dir" (refused in production). */
  jwtSecret: string | undefined;
  /**
   * The 32-byte key that seals connection credentials at rest (INBOX_SECRET_KEY). Absent means
   * "generate once and keep in the data dir" (refused in production).
   */
  secretKey: Buffer | undefined;
  /**
   * The key INBOX_SECRET_KEY replaced (INBOX_SECRET_KEY_PREVIOUS): what it sealed still opens
   * until `inbox rotate-secret-key` has sealed everything again under the new one.
   */
  previousSecretKey: Buffer | undefined;
  adminApiKey: string | undefined;
  integrations: Partial<Record<IntegrationKey, IntegrationConfig>>;
  accountsWebhookSecret: string | undefined;
  skipWebhookVerify: boolean;
  logWebhooks: boolean;
  /** Outbound webhooks may reach loopback and private addresses (tests, on-premise receivers). */
  allowPrivateWebhookUrls: boolean;
  /** Connections' `smtpUrl` may reach loopback and private addresses (tests, an on-premise relay). */
  allowPrivateSmtp: boolean;
  /** INBOX_ALLOW_PRIVATE_SSO: a workspace's OpenID issuer may be http and reach loopback/private addresses (docs/security.md). */
  allowPrivateSso: boolean;
  /** A workspace's AI `baseUrl` may reach loopback and private addresses (a model on the same machine or network). */
  allowPrivateAi: boolean;
  /**
   * The service's own mail (invites, password resets): INBOX_SMTP_URL and INBOX_MAIL_FROM, both
   * or neither. Undefined: what needs mail answers 503 `mail_unavailable` (docs/accounts.md).
   */
  systemMail: { smtpUrl: string; from: string } | undefined;
  /**
   * Workspace admins may connect channel accounts themselves (`POST /v1/connections`,
   * INBOX_TENANT_CONNECTIONS, default true); false leaves it to the operator's engage route.
   */
  tenantConnections: boolean;
  /** Outbound webhook endpoints one workspace may have (INBOX_MAX_WEBHOOK_ENDPOINTS). */
  maxWebhookEndpoints: number;
  /** `POST /v1/conversations` per workspace and minute (INBOX_MAX_NEW_CONVERSATIONS_PER_MINUTE). */
  maxNewConversationsPerMinute: number;
  /** When set, `/metrics` asks for `Authorization: Bearer <token>` (INBOX_METRICS_TOKEN). */
  metricsToken: string | undefined;
  /**
   * Proxies whose X-Forwarded-For is believed (login rate limits count the client behind
   * them): false, or addresses/CIDRs (and proxy-addr's `loopback`, `linklocal`, `uniquelocal`).
   * Never "every hop": that would let any client name its own address.
   */
  trustProxy: false | string[];
  logLevel: string;
  bodyLimitBytes: number;
  /** Deliveries the ingestion writer may hold before new ones get 503 (overload). */
  ingestMaxPending: number;
  /** Processed inbox rows (and outbound attempts) older than this many days are deleted. */
  retentionDays: number;
  /** Dead letters older than this many days are deleted. */
  deadLetterRetentionDays: number;
  /** Audit log entries older than this many days are deleted (INBOX_AUDIT_RETENTION_DAYS). */
  auditRetentionDays: number;
  /** Live chat visitor sockets one api process holds per client address (IPv6: per /64). */
  livechatMaxSocketsPerAddress: number;
  /** Live chat visitor sockets one api process holds in all. */
  livechatMaxSocketsPerProcess: number;
  /** The largest file a live chat visitor may upload (never above maxAttachmentBytes). */
  livechatMaxAttachmentBytes: number;
  /** Bytes one widget takes from its visitors' uploads in any hour, across every process. */
  livechatUploadBytesPerHour: number;
  /** Where attachments' bytes live (INBOX_STORAGE): PostgreSQL chunks, or an S3 bucket. */
  storage: 'postgres' | 's3';
  /** INBOX_S3_*: the bucket, an endpoint for S3-compatible servers, the region and a key prefix. */
  s3: { bucket: string | undefined; endpoint: string | undefined; region: string; prefix: string };
  /** The largest attachment taken in (download) or accepted (upload), in bytes. */
  maxAttachmentBytes: number;
  /** Where a `--role worker` process serves /healthz, /readyz and /metrics (INBOX_METRICS_PORT). */
  metricsPort: number;
  /** Connections of each process's query pool (INBOX_DB_POOL_MAX). */
  dbPoolMax: number;
  /** Connections of each process's queue (pg-boss) pool (INBOX_QUEUE_POOL_MAX). */
  queuePoolMax: number;
  /** `serve` migrates the database before it starts (INBOX_MIGRATE_ON_START); false leaves it to `inbox migrate`. */
  migrateOnStart: boolean;
  /**
   * OTEL_EXPORTER_OTLP_ENDPOINT: the OTLP/HTTP collector's base URL (traces go to `/v1/traces`
   * under it); unset, nothing of OpenTelemetry is loaded.
   */
  otelEndpoint: string | undefined;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
    this.name = 'ConfigError';
  }
}

/** The engage admin key is a bearer credential for the whole platform: no short ones. */
export const ADMIN_KEY_MIN = 32;
const PROXY_PRESETS = ['loopback', 'linklocal', 'uniquelocal'];

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const INTEGRATION_FIELDS: Record<keyof IntegrationConfig, 'string' | 'boolean'> = {
  appSecret: 'string',
  webhookVerifyToken: 'string',
  webhookSecret: 'string',
  providerReportSecret: 'string',
  skipVerify: 'boolean',
  apiBaseUrl: 'string',
  accessToken: 'string',
  accountSid: 'string',
  authToken: 'string',
};

/** How INBOX_SECRET_KEY is written, for the messages that ask for one. */
export const SECRET_KEY_FORMAT = 'a 32-byte key as 64 hex characters or 44 base64 characters, e.g. from `openssl rand -hex 32`';

/** The whatsapp_session signing secret must be 16..255 characters (docs/webhooks.md, "Integrations"). */
export const SESSION_SECRET_MIN = 16;
export const SESSION_SECRET_MAX = 255;

type Env = Record<string, string | undefined>;

/**
 * The variables that hold secrets. Each may instead name a file with `<NAME>_FILE` (a Docker or
 * Kubernetes secret mounted as a file): its content, trimmed, is the value. INBOX_INTEGRATIONS
 * has its own INBOX_INTEGRATIONS_FILE (a JSON file, parsed as such).
 */
export const SECRET_VARIABLES = [
  'DATABASE_URL',
  'DATABASE_REPLICA_URL',
  'INBOX_JWT_SECRET',
  'INBOX_SECRET_KEY',
  'INBOX_SECRET_KEY_PREVIOUS',
  'INBOX_ADMIN_API_KEY',
  'INBOX_ACCOUNTS_WEBHOOK_SECRET',
  'INBOX_METRICS_TOKEN',
  'INBOX_SMTP_URL',
];

/** Default pool sizes: each process holds at most this many connections per pool. */
export const POOL_DEFAULTS = { db: 10, queue: 10 } as const;

/** The other spelling of a setting that may be given as `NAME` or `NAME_FILE`, if `name` is one. */
function otherSpelling(name: string): string | undefined {
  const base = name.endsWith('_FILE') ? name.slice(0, -'_FILE'.length) : name;
  if (!SECRET_VARIABLES.includes(base) && base !== 'INBOX_INTEGRATIONS' && base !== 'INBOX_NEW_PASSWORD') return undefined;
  return base === name ? `${name}_FILE` : base;
}

/**
 * Reads the `.env` file of the working directory, when there is one, into the process's
 * environment, where everything (this module and the AWS SDK's credential chain alike) finds
 * it. A variable the environment already sets keeps its value: the environment wins, also
 * over the other spelling of the same secret (an environment's `INBOX_SECRET_KEY` leaves a
 * `.env`'s `INBOX_SECRET_KEY_FILE` unset). A `.env` that exists but cannot be read stops the
 * start like any other bad setting.
 */
export function applyDotEnv(cwd = process.cwd(), env: Env = process.env): void {
  const file = path.join(cwd, '.env');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    throw new ConfigError([`.env: cannot read ${file} (${code ?? 'unknown error'})`]);
  }
  const setBefore = new Set(Object.keys(env).filter((name) => env[name] !== undefined));
  for (const [name, value] of Object.entries(parseEnv(text))) {
    const other = otherSpelling(name);
    if (other !== undefined && setBefore.has(other)) continue;
    env[name] ??= value;
  }
}

/**
 * Reads the whole configuration from `env` once. Every problem is collected and thrown
 * together as a ConfigError, one line per variable, so a bad deployment fails at start.
 */
/** Where the embedded PostgreSQL and generated secrets live: `INBOX_DATA_DIR`, `.data` by default. */
export function dataDirOf(env: Env = process.env, cwd = process.cwd()): string {
  return path.resolve(cwd, env.INBOX_DATA_DIR?.trim() || '.data');
}

export function loadConfig(env: Env = process.env, cwd = process.cwd()): Config {
  const problems: string[] = [];
  const fromFiles = new Map<string, string | undefined>();
  const str = (name: string): string | undefined => {
    const v = env[name];
    const value = v === undefined || v.trim() === '' ? undefined : v.trim();
    if (!SECRET_VARIABLES.includes(name)) return value;
    if (!fromFiles.has(name)) fromFiles.set(name, readSecretFile(name, value, env[`${name}_FILE`], cwd, problems));
    return value ?? fromFiles.get(name);
  };
  const bool = (name: string): boolean => {
    const v = str(name);
    if (v === undefined) return false;
    if (['true', '1', 'yes'].includes(v.toLowerCase())) return true;
    if (['false', '0', 'no'].includes(v.toLowerCase())) return false;
    problems.push(`${name}: expected true or false, got "${v}"`);
    return false;
  };
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const v = str(name);
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!/^\d+$/.test(v) || n < min || n > max) {
      problems.push(`${name}: expected a whole number from ${min} to ${max}, got "${v}"`);
      return fallback;
    }
    return n;
  };

  const production = str('NODE_ENV') === 'production';
  const databaseUrl = str('DATABASE_URL');
  if (databaseUrl !== undefined && !isPostgresUrl(databaseUrl)) {
    problems.push('DATABASE_URL: expected a postgres:// or postgresql:// URL');
  }
  const databaseReplicaUrl = str('DATABASE_REPLICA_URL');
  if (databaseReplicaUrl !== undefined && !isPostgresUrl(databaseReplicaUrl)) {
    problems.push('DATABASE_REPLICA_URL: expected a postgres:// or postgresql:// URL');
  } else if (databaseReplicaUrl !== undefined && databaseUrl === undefined) {
    // The embedded PostgreSQL has no replicas: a replica URL beside it names some other database.
    problems.push('DATABASE_REPLICA_URL: needs DATABASE_URL (a replica of the embedded PostgreSQL is not supported)');
  }
  const jwtSecret = str('INBOX_JWT_SECRET');
  if (jwtSecret === undefined && production) {
    problems.push('INBOX_JWT_SECRET: required when NODE_ENV=production (at least 32 characters)');
  } else if (jwtSecret !== undefined && jwtSecret.length < 32) {
    problems.push('INBOX_JWT_SECRET: must be at least 32 characters');
  }
  const secretKeyText = str('INBOX_SECRET_KEY');
  const secretKey = secretKeyText === undefined ? undefined : parseSecretKey(secretKeyText);
  if (secretKeyText === undefined && production) {
    problems.push(`INBOX_SECRET_KEY: required when NODE_ENV=production (${SECRET_KEY_FORMAT})`);
  } else if (secretKeyText !== undefined && secretKey === undefined) {
    problems.push(`INBOX_SECRET_KEY: expected ${SECRET_KEY_FORMAT}, got ${secretKeyText.length} characters`);
  }
  const previousKeyText = str('INBOX_SECRET_KEY_PREVIOUS');
  const previousSecretKey = previousKeyText === undefined ? undefined : parseSecretKey(previousKeyText);
  if (previousKeyText !== undefined && previousSecretKey === undefined) {
    problems.push(`INBOX_SECRET_KEY_PREVIOUS: expected ${SECRET_KEY_FORMAT}, got ${previousKeyText.length} characters`);
  }
  const adminApiKey = str('INBOX_ADMIN_API_KEY');
  if (adminApiKey !== undefined && adminApiKey.length < ADMIN_KEY_MIN) {
    problems.push(`INBOX_ADMIN_API_KEY: must be at least ${ADMIN_KEY_MIN} characters`);
  }
  const logLevel = str('LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    problems.push(`LOG_LEVEL: expected one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }

  const integrations = readIntegrations(env, str, cwd, problems);
  const skipWebhookVerify = bool('INBOX_SKIP_WEBHOOK_VERIFY');
  if (production) {
    // In production an unverified delivery lets anyone who knows a webhook URL write into
    // any workspace: these development switches stop the start instead.
    if (skipWebhookVerify) problems.push('INBOX_SKIP_WEBHOOK_VERIFY: must not be true when NODE_ENV=production');
    for (const [key, cfg] of Object.entries(integrations)) {
      if (cfg.skipVerify) problems.push(`INBOX_INTEGRATIONS: "${key}.skipVerify" must not be true when NODE_ENV=production`);
    }
  }

  const port = int('PORT', 3000, 0, 65535);
  const host = str('HOST') ?? '127.0.0.1';
  const publicUrl = readPublicUrl(str('INBOX_PUBLIC_URL'), host, port, problems);

  const config: Config = {
    production,
    databaseUrl,
    databaseReplicaUrl,
    replicaMaxLagMs: int('INBOX_REPLICA_MAX_LAG_MS', 2000, 1, 3_600_000),
    dataDir: dataDirOf(env, cwd),
    port,
    host,
    publicUrl,
    jwtSecret,
    secretKey,
    previousSecretKey,
    adminApiKey,
    integrations,
    accountsWebhookSecret: str('INBOX_ACCOUNTS_WEBHOOK_SECRET'),
    skipWebhookVerify,
    logWebhooks: bool('INBOX_LOG_WEBHOOKS'),
    allowPrivateWebhookUrls: bool('INBOX_ALLOW_PRIVATE_WEBHOOK_URLS'),
    allowPrivateSmtp: bool('INBOX_ALLOW_PRIVATE_SMTP'),
    allowPrivateSso: bool('INBOX_ALLOW_PRIVATE_SSO'),
    allowPrivateAi: bool('INBOX_ALLOW_PRIVATE_AI'),
    systemMail: readSystemMail(str('INBOX_SMTP_URL'), str('INBOX_MAIL_FROM'), problems),
    tenantConnections: str('INBOX_TENANT_CONNECTIONS') === undefined ? true : bool('INBOX_TENANT_CONNECTIONS'),
    maxWebhookEndpoints: int('INBOX_MAX_WEBHOOK_ENDPOINTS', 20, 1, 10_000),
    maxNewConversationsPerMinute: int('INBOX_MAX_NEW_CONVERSATIONS_PER_MINUTE', 60, 1, 1_000_000),
    metricsToken: str('INBOX_METRICS_TOKEN'),
    trustProxy: readTrustProxy(str('INBOX_TRUST_PROXY'), problems),
    logLevel,
    bodyLimitBytes: int('INBOX_BODY_LIMIT_BYTES', 1024 * 1024, 1024, 100 * 1024 * 1024),
    ingestMaxPending: int('INBOX_INGEST_MAX_PENDING', 5000, 1, 1_000_000),
    retentionDays: int('INBOX_RETENTION_DAYS', 30, 1, 36500),
    deadLetterRetentionDays: int('INBOX_DEAD_LETTER_RETENTION_DAYS', 90, 1, 36500),
    auditRetentionDays: int('INBOX_AUDIT_RETENTION_DAYS', 365, 1, 36500),
    livechatMaxSocketsPerAddress: int('INBOX_LIVECHAT_MAX_SOCKETS_PER_ADDRESS', 50, 1, 1_000_000),
    livechatMaxSocketsPerProcess: int('INBOX_LIVECHAT_MAX_SOCKETS_PER_PROCESS', 10_000, 1, 1_000_000),
    livechatMaxAttachmentBytes: int('INBOX_LIVECHAT_MAX_ATTACHMENT_BYTES', 10 * 1024 * 1024, 1, 5 * 1024 * 1024 * 1024),
    livechatUploadBytesPerHour: int('INBOX_LIVECHAT_UPLOAD_BYTES_PER_HOUR', 500 * 1024 * 1024, 1, 1024 ** 5),
    storage: 'postgres',
    s3: {
      bucket: str('INBOX_S3_BUCKET'),
      endpoint: str('INBOX_S3_ENDPOINT'),
      region: str('INBOX_S3_REGION') ?? 'us-east-1',
      prefix: str('INBOX_S3_PREFIX') ?? '',
    },
    maxAttachmentBytes: int('INBOX_MAX_ATTACHMENT_BYTES', 25 * 1024 * 1024, 1, 5 * 1024 * 1024 * 1024),
    metricsPort: int('INBOX_METRICS_PORT', 9464, 0, 65535),
    dbPoolMax: int('INBOX_DB_POOL_MAX', POOL_DEFAULTS.db, 1, 1000),
    queuePoolMax: int('INBOX_QUEUE_POOL_MAX', POOL_DEFAULTS.queue, 1, 1000),
    migrateOnStart: str('INBOX_MIGRATE_ON_START') === undefined ? true : bool('INBOX_MIGRATE_ON_START'),
    otelEndpoint: str('OTEL_EXPORTER_OTLP_ENDPOINT'),
  };
  const storage = str('INBOX_STORAGE') ?? 'postgres';
  if (storage === 'postgres' || storage === 's3') config.storage = storage;
  else problems.push(`INBOX_STORAGE: expected postgres or s3, got "${storage}"`);
  if (config.storage === 's3' && config.s3.bucket === undefined) problems.push('INBOX_S3_BUCKET: required when INBOX_STORAGE=s3');
  if (config.s3.endpoint !== undefined && !/^https?:\/\//.test(config.s3.endpoint)) {
    problems.push(`INBOX_S3_ENDPOINT: expected an http(s) URL, got "${config.s3.endpoint}"`);
  }
  if (config.otelEndpoint !== undefined && !/^https?:\/\/[^/]/.test(config.otelEndpoint)) {
    problems.push(`OTEL_EXPORTER_OTLP_ENDPOINT: expected an http(s) URL, got "${config.otelEndpoint}"`);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/**
 * A postgres:// or postgresql:// URL that node-postgres can parse (it allows an empty host,
 * `postgres://user@/db`, for the socket directory its query names).
 */
function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//.test(value) && (URL.canParse(value) || URL.canParse(value.replace('@/', '@localhost/')));
}

/**
 * `<name>_FILE`: the secret read from a file. Setting both the variable and its file is refused
 * (which one wins would be a guess), and so is a file that cannot be read or is empty. The
 * problem names the variable and the path, never the content.
 */
function readSecretFile(
  name: string,
  value: string | undefined,
  fileSetting: string | undefined,
  cwd: string,
  problems: string[],
): string | undefined {
  const file = fileSetting?.trim();
  if (file === undefined || file === '') return undefined;
  if (value !== undefined) {
    problems.push(`${name}_FILE: set either ${name} or ${name}_FILE, not both`);
    return undefined;
  }
  let text: string;
  try {
    text = readFileSync(path.resolve(cwd, file), 'utf8').trim();
  } catch (err) {
    problems.push(`${name}_FILE: cannot read "${file}" (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    return undefined;
  }
  if (text === '') problems.push(`${name}_FILE: "${file}" is empty`);
  return text === '' ? undefined : text;
}

/** What the one-shot CLI commands read from the environment besides the service's config. */
export interface CliSettings {
  /** `create-user`'s password, so scripts need not pipe it in. */
  newPassword: string | undefined;
  /** One-shot commands print JSON on stdout: they log only warnings unless told otherwise. */
  logLevel: string;
}

/** `create-user`'s password may come from a file too (`INBOX_NEW_PASSWORD_FILE`), like every secret. */
export function loadCliSettings(env: Env = process.env, cwd = process.cwd()): CliSettings {
  const problems: string[] = [];
  const inline = env.INBOX_NEW_PASSWORD || undefined;
  const fromFile = readSecretFile('INBOX_NEW_PASSWORD', inline, env.INBOX_NEW_PASSWORD_FILE, cwd, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return { newPassword: inline ?? fromFile, logLevel: env.LOG_LEVEL?.trim() || 'warn' };
}

/**
 * INBOX_SMTP_URL (`smtp://user:pass@host:587` or `smtps://…`) and INBOX_MAIL_FROM
 * (`Inbox <inbox@example.com>`). The URL is never echoed: it holds the SMTP password.
 */
function readSystemMail(smtpUrl: string | undefined, from: string | undefined, problems: string[]) {
  if (smtpUrl === undefined && from === undefined) return undefined;
  let url: URL | undefined;
  try {
    url = smtpUrl === undefined ? undefined : new URL(smtpUrl);
  } catch {
    url = undefined;
  }
  if (smtpUrl === undefined) problems.push('INBOX_SMTP_URL: required when INBOX_MAIL_FROM is set');
  else if (!url || (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') || url.hostname === '')
    problems.push('INBOX_SMTP_URL: expected an smtp:// or smtps:// URL with a host, e.g. smtp://user:pass@smtp.example.com:587');
  if (from === undefined) problems.push('INBOX_MAIL_FROM: required when INBOX_SMTP_URL is set, e.g. "Inbox <inbox@example.com>"');
  else if (!/^(?:[^<>@]*<[^<>@\s]+@[^<>@\s]+>|[^<>@\s]+@[^<>@\s]+)$/.test(from))
    problems.push(`INBOX_MAIL_FROM: expected an address or "Name <address>", got "${from}"`);
  return smtpUrl === undefined || from === undefined ? undefined : { smtpUrl, from };
}

/** `http://HOST:PORT`, INBOX_PUBLIC_URL's default. */
export function listenUrl(host: string, port: number): string {
  return `http://${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
}

/**
 * INBOX_PUBLIC_URL: an http(s) URL with no query or fragment; a path is kept (a service
 * behind a proxy under a prefix). Unset: the address the service listens on.
 */
function readPublicUrl(value: string | undefined, host: string, port: number, problems: string[]): string {
  if (value === undefined) return listenUrl(host, port);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    problems.push(`INBOX_PUBLIC_URL: expected an http(s) URL such as https://inbox.example.com, got "${value}"`);
    return value;
  }
  if (
    (url.protocol !== 'https:' && url.protocol !== 'http:') ||
    url.search !== '' ||
    url.hash !== '' ||
    url.username !== '' ||
    url.password !== ''
  ) {
    // A password given here is a mistake, not a value to print back.
    if (url.password !== '') url.password = '***';
    problems.push(`INBOX_PUBLIC_URL: expected an http(s) URL without credentials, query or fragment, got "${url.toString()}"`);
    return value;
  }
  return url.toString().replace(/\/+$/, '');
}

/**
 * INBOX_TRUST_PROXY: `false`/unset, `true` (loopback only: a proxy on the same machine), or a
 * comma-separated list of proxy addresses and CIDRs.
 */
function readTrustProxy(value: string | undefined, problems: string[]): false | string[] {
  if (value === undefined || ['false', '0', 'no'].includes(value.toLowerCase())) return false;
  if (['true', '1', 'yes'].includes(value.toLowerCase())) return ['loopback'];
  const entries = value
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  const bad = entries.filter((e) => !isProxyAddress(e));
  if (entries.length === 0 || bad.length > 0) {
    problems.push(
      `INBOX_TRUST_PROXY: expected false, true (loopback) or a comma-separated list of addresses/CIDRs, got "${bad[0] ?? value}"`,
    );
    return false;
  }
  return entries;
}

function isProxyAddress(entry: string): boolean {
  if (PROXY_PRESETS.includes(entry)) return true;
  const [address, bits, ...rest] = entry.split('/');
  const family = isIP(address ?? '');
  if (family === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  if (!/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

/**
 * What is wrong with a JSON text, without its content: V8 quotes the text around an unexpected
 * token ("…"ppSecret":s3cr3t"…"), and here that text is a secret.
 */
function jsonSyntaxProblem(err: Error): string {
  return err.message.startsWith('Unexpected token') ? 'an unexpected character' : err.message;
}

function readIntegrations(_env: Env, str: (name: string) => string | undefined, cwd: string, problems: string[]): Config['integrations'] {
  let source = 'INBOX_INTEGRATIONS';
  let text = str('INBOX_INTEGRATIONS');
  const file = str('INBOX_INTEGRATIONS_FILE');
  if (text !== undefined && file !== undefined) {
    problems.push('INBOX_INTEGRATIONS_FILE: set either INBOX_INTEGRATIONS or INBOX_INTEGRATIONS_FILE, not both');
    return {};
  }
  if (file !== undefined) {
    source = 'INBOX_INTEGRATIONS_FILE';
    try {
      text = readFileSync(path.resolve(cwd, file), 'utf8');
    } catch (err) {
      problems.push(`INBOX_INTEGRATIONS_FILE: cannot read "${file}" (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
      return {};
    }
  }
  if (text === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    problems.push(`${source}: not valid JSON (${jsonSyntaxProblem(err as Error)})`);
    return {};
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    problems.push(`${source}: expected a JSON object keyed by integration key`);
    return {};
  }
  const out: Config['integrations'] = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (!(INTEGRATION_KEYS as readonly string[]).includes(key)) {
      problems.push(`${source}: unknown integration key "${key}" (known: ${INTEGRATION_KEYS.join(', ')})`);
      continue;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      problems.push(`${source}: "${key}" must be an object`);
      continue;
    }
    const entry: IntegrationConfig = {};
    for (const [field, fieldValue] of Object.entries(value)) {
      const expected = INTEGRATION_FIELDS[field as keyof IntegrationConfig];
      if (expected === undefined) {
        problems.push(`${source}: "${key}.${field}" is not a known field (known: ${Object.keys(INTEGRATION_FIELDS).join(', ')})`);
      } else if (typeof fieldValue !== expected) {
        problems.push(`${source}: "${key}.${field}" must be a ${expected}`);
      } else {
        (entry as Record<string, unknown>)[field] = fieldValue;
      }
    }
    const secret = entry.webhookSecret;
    if (key === 'whatsapp_session' && secret !== undefined && (secret.length < SESSION_SECRET_MIN || secret.length > SESSION_SECRET_MAX)) {
      problems.push(`${source}: "whatsapp_session.webhookSecret" must be ${SESSION_SECRET_MIN} to ${SESSION_SECRET_MAX} characters`);
    }
    out[key as IntegrationKey] = entry;
  }
  return out;
}
