/**
 * The one error family. Routes throw these; the error handler in app.ts turns them into
 * `{ error: { code, message }, meta: { requestId } }` with `status`.
 */
export class AppError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
    /** A refusal the service chose (shedding load), not a failure: a 5xx the error handler does not log. */
    readonly chosen = false,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const MALFORMED_CURSOR_MESSAGE = 'malformed cursor: pass meta.nextCursor back unchanged';

/** The catalogue: every error code the service answers with. */
export const errors = {
  badRequest: (message: string) => new AppError('bad_request', 400, message),
  /** Another 4xx that Fastify itself raised (e.g. a malformed header), with its own status. */
  clientError: (status: number, message: string) => new AppError('bad_request', status, message),
  invalidJson: (message = 'request body is not valid JSON') => new AppError('invalid_json', 400, message),
  unauthorized: (message = 'authentication required') => new AppError('unauthorized', 401, message),
  invalidApiKey: (message = 'invalid API key') => new AppError('invalid_api_key', 401, message),
  /** The password was right; the user has two-factor sign-in on: send `otp` too (docs/security.md). */
  otpRequired: () => new AppError('otp_required', 401, 'two-factor sign-in is on: send otp, a current code or a recovery code'),
  /** The workspace requires two-factor sign-in and the caller has not turned it on (docs/security.md). */
  twoFactorRequired: () =>
    new AppError('2fa_required', 403, 'this workspace requires two-factor sign-in: turn it on with POST /v1/users/me/2fa/setup and enable'),
  /** The workspace signs in with its identity provider only (`sso.enforce`; docs/security.md). */
  ssoRequired: (workspaceId: number) =>
    new AppError('sso_required', 401, `this workspace signs in with single sign-on: use /auth/sso/${workspaceId}/start`),
  forbidden: (message = 'not allowed') => new AppError('forbidden', 403, message),
  notFound: (what = 'resource') => new AppError('not_found', 404, `${what} not found`),
  noRoute: (method: string, path: string) => new AppError('not_found', 404, `no route for ${method} ${path}`),
  /** A provider's subscription challenge that does not match (docs/webhooks.md: a bare 404). */
  challengeRefused: () => new AppError('not_found', 404, 'challenge not accepted'),
  conflict: (message: string) => new AppError('conflict', 409, message),
  /** AI assist is off for the workspace (docs/ai.md): an admin turns it on in the workspace's `ai` setting. */
  aiDisabled: () =>
    new AppError('ai_disabled', 409, 'AI assist is off for this workspace: an admin sets ai.enabled in PATCH /v1/workspace'),
  /** A CSAT survey past the time it takes a rating (docs/reports.md, "CSAT"). */
  surveyClosed: (closedAt: Date) => new AppError('gone', 410, `this survey closed at ${closedAt.toISOString()}: 7 days after it was sent`),
  /** A plain HTTP request to a websocket route (`/v1/realtime`, a visitor socket): it only upgrades. */
  upgradeRequired: () =>
    new AppError('upgrade_required', 426, 'this route is a websocket: connect with Upgrade: websocket', { upgrade: 'websocket' }),
  payloadTooLarge: (limit: number) => new AppError('payload_too_large', 413, `request body exceeds ${limit} bytes`),
  /** An upload over INBOX_MAX_ATTACHMENT_BYTES: the read stopped there and nothing was kept. */
  attachmentTooLarge: (limit: number) =>
    new AppError('payload_too_large', 413, `the file is larger than the limit of ${limit} bytes; nothing was kept`),
  /** The content of an attachment whose bytes are not stored (still `pending`, or `failed`). */
  attachmentNotStored: (status: string) =>
    new AppError(
      'attachment_not_stored',
      409,
      `the attachment is ${status}: its bytes are not stored${status === 'pending' ? ' yet; poll GET /v1/attachments/:id' : ''}`,
    ),
  /** The zip of an export still being written, or whose writing failed. */
  exportNotReady: (status: string) =>
    new AppError('export_not_ready', 409, `the export is ${status}${status === 'pending' ? ': poll GET /v1/exports/:id' : ''}`),
  /** `received` is the request's content-type header as sent (cut to 100 characters). */
  unsupportedMediaType: (received: string | undefined, accepted: readonly string[] = ['application/json']) =>
    new AppError(
      'unsupported_media_type',
      415,
      `${received ? `content type "${received.slice(0, 100)}"` : 'a body without a content type'} is not accepted here; send ${accepted.join(' or ')}`,
    ),
  validation: (message: string) => new AppError('validation_failed', 422, message),
  malformedCursor: () => new AppError('validation_failed', 422, MALFORMED_CURSOR_MESSAGE),
  /** A free-form reply after the channel's reply window (docs/replies.md, "Reply windows"). */
  windowClosed: (lastWroteAt: Date | null) =>
    new AppError(
      'window_closed',
      422,
      `the reply window of this channel is closed: the contact ${lastWroteAt ? `last wrote at ${lastWroteAt.toISOString()}` : 'has not written'}; send a template`,
    ),
  rateLimited: (retryAfterSeconds: number, message = 'too many attempts; try again later') =>
    new AppError('rate_limited', 429, message, { 'retry-after': String(retryAfterSeconds) }),
  internal: () => new AppError('internal_error', 500, 'internal error'),
  /** A provider's API refused or failed a call the request needed (its words, secrets cut out). */
  providerError: (message: string) => new AppError('provider_error', 502, message),
  /** The workspace's model failed a call: what happened (a status, a timeout), never the provider's words (docs/ai.md). */
  aiUnavailable: (what: string) => new AppError('ai_unavailable', 502, `the AI provider did not answer usefully: ${what}`),
  /** The service's own mail is not configured (INBOX_SMTP_URL, INBOX_MAIL_FROM): invites and resets cannot be sent. */
  mailUnavailable: () =>
    new AppError(
      'mail_unavailable',
      503,
      'the service cannot send e-mail: the operator has not set INBOX_SMTP_URL and INBOX_MAIL_FROM (docs/accounts.md)',
    ),
  unavailable: (message: string, retryAfterSeconds?: number) =>
    new AppError('unavailable', 503, message, retryAfterSeconds === undefined ? {} : { 'retry-after': String(retryAfterSeconds) }),
  /**
   * Ingestion is full (INBOX_INGEST_MAX_PENDING): the same 503 `unavailable`, but chosen, so it
   * is not logged per request; the writer says when it starts and stops refusing.
   */
  ingestFull: () =>
    new AppError('unavailable', 503, 'too many deliveries are waiting to be stored; retry shortly', { 'retry-after': '1' }, true),
  /**
   * The process is stopping (SIGTERM): a request that reaches it on a connection still open is
   * sent elsewhere, chosen like ingestFull. Nothing of it was done.
   */
  shuttingDown: () => new AppError('unavailable', 503, 'the service is shutting down; retry shortly', { 'retry-after': '1' }, true),
};
