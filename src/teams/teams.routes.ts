import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { recordAudit, trailOf } from '../audit/audit.js';
import { requireAuth, tenantOf } from '../auth/auth.js';
import type { Deps } from '../deps.js';
import { deleted, envelope } from '../http/envelope.js';
import { errors } from '../http/errors.js';
import { IntId } from '../http/ids.js';
import { CursorQuery, parseCursorQuery } from '../http/pagination.js';
import { CursorPage, Deleted, Envelope, Nullable } from '../http/schemas.js';
import { BusinessHoursInputSetting } from '../sla/business-hours.js';
import { lockTeamThreads } from '../threads/thread-workflow.queries.js';
import { leftDeletedTeam } from '../threads/thread-workflow.service.js';
import { deleteTeam, listTeams, lockTeam, memberIdsOf } from './teams.queries.js';
import { TEAM_NAME_MAX, TeamResource, teamResource } from './teams.resources.js';
import { changeTeam, createTeam, getTeam, setTeamMembers } from './teams.service.js';

const Params = Type.Object({ id: Type.With(IntId, { description: 'the team id' }) });
const Name = Type.String({ minLength: 1, maxLength: TEAM_NAME_MAX, description: `1–${TEAM_NAME_MAX} characters, unique in the workspace` });
const Description = Nullable(Type.String({ maxLength: 1000, description: 'what the team does; null clears it' }));

const AutoAssign = Type.Boolean({
  description: 'route the team’s threads to its online members under their cap (docs/teams.md); default false',
});
const BusinessHours = Type.With(BusinessHoursInputSetting, {
  description: "the team's own business hours, which win over the workspace's for its threads; null = the workspace's (docs/sla.md)",
});
export const TeamCreate = Type.Object(
  {
    name: Name,
    description: Type.Optional(Description),
    autoAssign: Type.Optional(AutoAssign),
    businessHours: Type.Optional(BusinessHours),
  },
  { additionalProperties: false },
);
export const TeamPatch = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    autoAssign: Type.Optional(AutoAssign),
    businessHours: Type.Optional(BusinessHours),
  },
  { additionalProperties: false, minProperties: 1 },
);
export const TeamMembersBody = Type.Object(
  {
    userIds: Type.Array(Type.With(IntId, { description: 'a user of the workspace' }), {
      maxItems: 1000,
      description: 'the whole list of members; it replaces the previous one',
    }),
  },
  { additionalProperties: false },
);

/**
 * `/v1/teams` (docs/teams.md): anyone of the workspace (and `read` keys) may read them; only
 * admins (a JWT admin or an `admin` key) create, change, staff and delete them.
 */
export const teamsRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const read = requireAuth(deps);
  const admin = requireAuth(deps, { scope: 'admin' });

  app.get(
    '/',
    { preValidation: read, schema: { summary: 'List teams', querystring: CursorQuery, response: { 200: CursorPage(TeamResource) } } },
    async (request) => {
      const page = await listTeams(deps.db, tenantOf(request).workspaceId, parseCursorQuery(request.query));
      const members = await memberIdsOf(
        deps.db,
        page.items.map((t) => t.id),
      );
      return envelope(
        request,
        page.items.map((t) => teamResource(t, members.get(t.id)!)),
        page.meta,
      );
    },
  );

  app.post(
    '/',
    { preValidation: admin, schema: { summary: 'Create a team', body: TeamCreate, response: { 201: Envelope(TeamResource) } } },
    async (request, reply) => {
      const team = await createTeam(deps, tenantOf(request).workspaceId, request.body, trailOf(request));
      reply.code(201);
      return envelope(request, team);
    },
  );

  app.get(
    '/:id',
    { preValidation: read, schema: { summary: 'Get a team', params: Params, response: { 200: Envelope(TeamResource) } } },
    async (request) => envelope(request, await getTeam(deps, tenantOf(request).workspaceId, request.params.id)),
  );

  app.patch(
    '/:id',
    {
      preValidation: admin,
      schema: {
        summary: 'Rename a team, change its description or its routing',
        params: Params,
        body: TeamPatch,
        response: { 200: Envelope(TeamResource) },
      },
    },
    async (request) =>
      envelope(request, await changeTeam(deps, tenantOf(request).workspaceId, request.params.id, request.body, trailOf(request))),
  );

  app.put(
    '/:id/members',
    {
      preValidation: admin,
      schema: {
        summary: "Replace a team's members",
        params: Params,
        body: TeamMembersBody,
        response: { 200: Envelope(TeamResource) },
      },
    },
    async (request) =>
      envelope(
        request,
        await setTeamMembers(deps, tenantOf(request).workspaceId, request.params.id, request.body.userIds, trailOf(request)),
      ),
  );

  app.delete(
    '/:id',
    {
      preValidation: admin,
      schema: {
        summary: 'Delete a team',
        description:
          'Its threads and connections stay, with teamId null; each thread gets an activity line and is announced as thread.updated.',
        params: Params,
        response: { 200: Envelope(Deleted) },
      },
    },
    async (request) => {
      const auth = tenantOf(request);
      await deps.db.transaction().execute(async (trx) => {
        const team = await lockTeam(trx, auth.workspaceId, request.params.id);
        if (!team) throw errors.notFound('team');
        const threads = await lockTeamThreads(trx, auth.workspaceId, team.id);
        await deleteTeam(trx, auth.workspaceId, team.id);
        await recordAudit(trx, trailOf(request), 'team.deleted', { type: 'team', id: team.id });
        await leftDeletedTeam(deps, trx, auth, threads, team.name);
      });
      return deleted(request, request.params.id);
    },
  );
};
