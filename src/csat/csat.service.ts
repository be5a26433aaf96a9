import type { TenantAuth } from '../auth/auth.js';
import { DEFAULT_CSAT_QUESTION } from '../connections/csat-settings.js';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import type { CursorRequest } from '../http/pagination.js';
import { announce } from '../messaging/announce.js';
import { readInstant, reportZone } from '../reports/reports.service.js';
import { type CsatResponseRow, findSurvey, listCsatResponses, rateConversation } from './csat.queries.js';
import { hashSurveyToken } from './survey.js';

/** How long after it was sent a survey takes a rating, or a change of it. */
export const CSAT_OPEN_DAYS = 7;
const DAY = 86_400_000;
/** The longest comment kept. */
export const CSAT_COMMENT_MAX = 2000;
/** A survey link's token as newSurveyToken makes it (anything else is no survey). */
const TOKEN = /^[A-Za-z0-9_-]{20,64}$/;

/** What the rating page shows of a survey. */
export interface SurveyView {
  question: string;
  workspaceName: string;
  colour: string | null;
  rating: number | null;
  comment: string | null;
  closesAt: Date;
  closed: boolean;
}

async function survey(deps: Pick<Deps, 'db' | 'now'>, token: string) {
  const row = TOKEN.test(token) ? await findSurvey(deps.db, hashSurveyToken(token)) : undefined;
  if (!row?.csat_sent_at) return undefined;
  const closesAt = new Date(row.csat_sent_at.getTime() + CSAT_OPEN_DAYS * DAY);
  return { row, closesAt, closed: deps.now().getTime() >= closesAt.getTime() };
}

/** The survey of a link, as its page shows it; undefined for a token that names none. */
export async function viewSurvey(deps: Pick<Deps, 'db' | 'now'>, token: string): Promise<SurveyView | undefined> {
  const found = await survey(deps, token);
  if (!found) return undefined;
  const { row } = found;
  return {
    question: row.csat_question ?? DEFAULT_CSAT_QUESTION,
    workspaceName: row.workspace_name,
    colour: row.livechat_colour,
    rating: row.csat_rating,
    comment: row.csat_comment,
    closesAt: found.closesAt,
    closed: found.closed,
  };
}

/**
 * The contact's answer (`POST /csat/:token`): 1 to 5 and an optional comment, kept on the
 * conversation and announced `csat.received`; a later answer replaces it until the survey
 * closes, 7 days after it was sent (then 410). 404 for a token that names no survey.
 */
export async function rateSurvey(deps: Deps, token: string, input: { rating: number; comment?: string }) {
  const found = await survey(deps, token);
  if (!found) throw errors.notFound('survey');
  if (found.closed) throw errors.surveyClosed(found.closesAt);
  const { row } = found;
  // A rating alone (the widget's buttons) keeps the comment given before; a blank one clears it.
  const comment = input.comment === undefined ? row.csat_comment : input.comment.trim() || null;
  const now = deps.now();
  await deps.db.transaction().execute(async (trx) => {
    await rateConversation(trx, row.id, input.rating, comment, now);
    await announce(
      deps,
      trx,
      [
        {
          type: 'csat.received',
          workspaceId: row.workspace_id,
          csat: { threadId: row.thread_id, rating: input.rating, comment, contactId: row.contact_id, assigneeId: row.assignee_id },
        },
      ],
      now,
    );
  });
  return { rating: input.rating, comment, ratedAt: now.toISOString(), closesAt: found.closesAt.toISOString() };
}

/** `GET /v1/csat-responses`: the ratings received, newest first, filtered by when and by rating. */
export async function csatResponses(
  deps: Pick<Deps, 'db'>,
  auth: TenantAuth,
  q: { from?: string; to?: string; timezone?: string; rating?: string },
  page: CursorRequest,
) {
  // A zone is read (and checked) when given or when a bound needs it, as the reports read it.
  const timezone =
    q.from !== undefined || q.to !== undefined || q.timezone !== undefined
      ? await reportZone(deps.db, auth.workspaceId, q.timezone)
      : 'UTC';
  const from = q.from === undefined ? undefined : readInstant(q.from, 'from', timezone);
  const to = q.to === undefined ? undefined : readInstant(q.to, 'to', timezone);
  if (from && to && !(to.getTime() > from.getTime())) throw errors.validation('to: must be after from');
  let ratings: number[] | undefined;
  if (q.rating !== undefined) {
    ratings = q.rating.split(',').map((r) => Number(r.trim()));
    if (ratings.some((r) => !Number.isInteger(r) || r < 1 || r > 5))
      throw errors.validation('rating: one or more of 1 to 5, comma-separated (rating=4,5)');
  }
  const result = await listCsatResponses(deps.db, auth, { from, to, ratings }, page);
  return { items: result.items.map(csatResponseResource), meta: result.meta };
}

export function csatResponseResource(row: CsatResponseRow) {
  return {
    conversationId: row.id,
    threadId: row.thread_id,
    contactId: row.contact_id,
    connectionId: row.connection_id,
    assigneeId: row.assignee_id,
    teamId: row.team_id,
    rating: row.csat_rating!,
    comment: row.csat_comment,
    ratedAt: row.csat_at!.toISOString(),
    resolvedAt: row.resolved_at?.toISOString() ?? null,
  };
}
