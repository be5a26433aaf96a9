import pino, { type Bindings, type ChildLoggerOptions, type LevelWithSilent, type Logger } from 'pino';

/** Credential headers, wherever a logged object carries a `headers` map. */
const SECRET_HEADERS = [
  'authorization',
  'cookie',
  '["set-cookie"]',
  '["x-api-key"]',
  '["x-service-admin-api-key"]',
  '["x-hub-signature-256"]',
  '["x-vendor-auth"]',
  '["x-service-signature"]',
  '["x-service-signature-previous"]',
  '["x-webhook-signature"]',
  '["x-gatewayone-signature"]',
  '["x-aggregator-signature"]',
  '["x-signature"]',
];
/** Field names that hold a credential whatever object they sit in. */
const SECRET_FIELDS = [
  'password',
  'currentPassword',
  'newPassword',
  'token',
  'visitorToken',
  'accessToken',
  'secret',
  'jwtSecret',
  'secretKey',
  'credentials',
  'smtpUrl',
  'appSecret',
  'webhookSecret',
  'webhookVerifyToken',
  'providerReportSecret',
  'adminApiKey',
  'accountsWebhookSecret',
  'connectionString',
];

/**
 * Paths censored in every log line. Pino applies them to what the serializers produced, so
 * they name what is really written: the request serializer emits no headers (its URL is
 * cleaned in `serializeRequest`), but an `err` may carry the request it failed on (an HTTP
 * client's `config`/`request`/`headers`), and a logged object may carry a secret field.
 */
export const REDACT_PATHS = [
  ...SECRET_FIELDS.flatMap((f) => [f, `*.${f}`, `*.*.${f}`]),
  ...SECRET_HEADERS.map((h) => (h.startsWith('[') ? h : `.${h}`)).flatMap((h) => [`headers${h}`, `*.headers${h}`]),
  'err.config',
  'err.request',
  'err.response.config',
  'err.response.request',
  'err.response.headers',
  'config.integrations.*.appSecret',
  'config.integrations.*.webhookSecret',
  'config.integrations.*.webhookVerifyToken',
  'config.integrations.*.providerReportSecret',
  'config.integrations.*.accessToken',
];

/**
 * Query parameters whose values are credentials: a socket's token, a widget visitor's token,
 * and a signed attachment link's `signature` and `expires` (together they are the link).
 */
const SECRET_QUERY_PARAMS = new Set(['token', 'visitortoken', 'hub.verify_token', 'signature', 'expires']);
const SSO_CALLBACK_SECRETS = new Set([...SECRET_QUERY_PARAMS, 'code', 'state']);

/**
 * A request URL as it may be logged. A CSAT survey's token (`/csat/<token>`) and the SSO
 * callback's `code` and `state` are replaced. `/webhooks/*` loses its whole query: the `hub.*` challenge
 * carries the verify token (for whatsapp, the signing secret itself), and no provider query
 * is worth a leaked secret. Elsewhere the values of credential parameters are replaced.
 */
export function loggableUrl(url: string): string {
  const q = url.indexOf('?');
  // A survey link's token is its path: whoever holds it may rate the conversation.
  const path = (q === -1 ? url : url.slice(0, q)).replace(/^(\/+csat\/+)[^/]+/i, '$1[redacted]');
  if (q === -1) return path;
  if (/^\/+webhooks(\/|$)/i.test(safeDecode(path))) return path;
  // The identity provider's answer: the code (with the state) finishes that sign-in.
  const secrets = /^\/+auth\/+sso\/+callback\/*$/i.test(safeDecode(path)) ? SSO_CALLBACK_SECRETS : SECRET_QUERY_PARAMS;
  const params = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = safeDecode(eq === -1 ? pair : pair.slice(0, eq)).toLowerCase();
      return secrets.has(name) ? `${pair.slice(0, eq === -1 ? pair.length : eq)}=[redacted]` : pair;
    });
  return `${path}?${params.join('&')}`;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s.replaceAll('+', ' '));
  } catch {
    return s;
  }
}

/** Requests as logged: no headers, no body, and a URL without credentials (`loggableUrl`). */
function serializeRequest(req: { method?: string; url?: string; ip?: string; host?: string }) {
  return { method: req.method, url: req.url === undefined ? undefined : loggableUrl(req.url), host: req.host, remoteAddress: req.ip };
}

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, serializers: { req: serializeRequest } }, destination);
}

/**
 * The logger of a one-shot CLI command (`inbox migrate`, `create-api-key`…), whose stdout is its
 * JSON answer for scripts (`KEY=$(inbox create-api-key … | json key)`): its lines go to stderr,
 * written at once, since the command ends with process.exit.
 */
export function createCommandLogger(level: string): Logger {
  return createLogger(level, pino.destination({ dest: 2, sync: true }));
}

type LogFn = Logger['info'];

/**
 * A request's logger, made by Fastify for every request. Pino's `child()` serializes and
 * redacts its bindings at once, a cost every accepted delivery paid for a logger it almost
 * never uses (an accepted delivery writes no line). This one makes the child the first time
 * a line at an enabled level is written, so a request that logs nothing costs nothing here.
 */
export class RequestLogger {
  #child: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private get real(): Logger {
    this.#child ??= this.parent.child(this.bindings, this.options);
    return this.#child;
  }

  get level(): LevelWithSilent | string {
    return this.#child?.level ?? this.parent.level;
  }

  set level(level: LevelWithSilent | string) {
    this.real.level = level;
  }

  isLevelEnabled(level: string): boolean {
    return this.#child?.isLevelEnabled(level) ?? this.parent.isLevelEnabled(level);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): Logger {
    return this.real.child(bindings, options);
  }

  // Methods on the prototype, not arrow-function fields: one logger is made per request, and
  // fields would allocate seven closures for each.
  fatal(...args: Parameters<LogFn>): void {
    this.write('fatal', args);
  }
  error(...args: Parameters<LogFn>): void {
    this.write('error', args);
  }
  warn(...args: Parameters<LogFn>): void {
    this.write('warn', args);
  }
  info(...args: Parameters<LogFn>): void {
    this.write('info', args);
  }
  debug(...args: Parameters<LogFn>): void {
    this.write('debug', args);
  }
  trace(...args: Parameters<LogFn>): void {
    this.write('trace', args);
  }
  silent(): void {}

  private write(level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace', args: Parameters<LogFn>): void {
    if (this.isLevelEnabled(level)) (this.real[level] as (...a: unknown[]) => void)(...args);
  }
}

export type { Logger };
