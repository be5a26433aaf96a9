import { readFileSync } from 'node:fs';
import path from 'node:path';

/** Integration keys the service knows (SPEC §5.2). */
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
] as const;
export type IntegrationKey = (typeof INTEGRATION_KEYS)[number];

/** Per-integration settings, named as SPEC names them. */
export interface IntegrationConfig {
  appSecret?: string;
  webhookVerifyToken?: string;
  webhookSecret?: string;
  providerReportSecret?: string;
  skipVerify?: boolean;
  apiBaseUrl?: string;
  accessToken?: string;
}

export interface Config {
  production: boolean;
  databaseUrl: string | undefined;
  dataDir: string;
  port: number;
  host: string;
  /** Absent means "generate once and keep in the data dir" (refused in production). */
  jwtSecret: string | undefined;
  adminApiKey: string | undefined;
  integrations: Partial<Record<IntegrationKey, IntegrationConfig>>;
  accountsWebhookSecret: string | undefined;
  skipWebhookVerify: boolean;
  logWebhooks: boolean;
  /** Behind a reverse proxy: take the client address from X-Forwarded-For (login rate limits). */
  trustProxy: boolean;
  logLevel: string;
  bodyLimitBytes: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
    this.name = 'ConfigError';
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const INTEGRATION_FIELDS: Record<keyof IntegrationConfig, 'string' | 'boolean'> = {
  appSecret: 'string',
  webhookVerifyToken: 'string',
  webhookSecret: 'string',
  providerReportSecret: 'string',
  skipVerify: 'boolean',
  apiBaseUrl: 'string',
  accessToken: 'string',
};

/** The whatsapp_session signing secret must be 16..255 characters (SPEC §5.2 rule 4). */
export const SESSION_SECRET_MIN = 16;
export const SESSION_SECRET_MAX = 255;

type Env = Record<string, string | undefined>;

/**
 * Reads the whole configuration from `env` once. Every problem is collected and thrown
 * together as a ConfigError, one line per variable, so a bad deployment fails at start.
 */
export function loadConfig(env: Env = process.env, cwd = process.cwd()): Config {
  const problems: string[] = [];
  const str = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
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
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push('DATABASE_URL: expected a postgres:// or postgresql:// URL');
  }
  const jwtSecret = str('INBOX_JWT_SECRET');
  if (jwtSecret === undefined && production) {
    problems.push('INBOX_JWT_SECRET: required when NODE_ENV=production (at least 32 characters)');
  } else if (jwtSecret !== undefined && jwtSecret.length < 32) {
    problems.push('INBOX_JWT_SECRET: must be at least 32 characters');
  }
  const logLevel = str('LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    problems.push(`LOG_LEVEL: expected one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }

  const config: Config = {
    production,
    databaseUrl,
    dataDir: path.resolve(cwd, str('INBOX_DATA_DIR') ?? '.data'),
    port: int('PORT', 3000, 0, 65535),
    host: str('HOST') ?? '127.0.0.1',
    jwtSecret,
    adminApiKey: str('INBOX_ADMIN_API_KEY'),
    integrations: readIntegrations(env, str, cwd, problems),
    accountsWebhookSecret: str('INBOX_ACCOUNTS_WEBHOOK_SECRET'),
    skipWebhookVerify: bool('INBOX_SKIP_WEBHOOK_VERIFY'),
    logWebhooks: bool('INBOX_LOG_WEBHOOKS'),
    trustProxy: bool('INBOX_TRUST_PROXY'),
    logLevel,
    bodyLimitBytes: int('INBOX_BODY_LIMIT_BYTES', 1024 * 1024, 1024, 100 * 1024 * 1024),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

function readIntegrations(
  env: Env,
  str: (name: string) => string | undefined,
  cwd: string,
  problems: string[],
): Config['integrations'] {
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
    problems.push(`${source}: not valid JSON (${(err as Error).message})`);
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
    if (key === 'whatsapp_session' && secret !== undefined &&
        (secret.length < SESSION_SECRET_MIN || secret.length > SESSION_SECRET_MAX)) {
      problems.push(`${source}: "whatsapp_session.webhookSecret" must be ${SESSION_SECRET_MIN} to ${SESSION_SECRET_MAX} characters`);
    }
    out[key as IntegrationKey] = entry;
  }
  return out;
}
