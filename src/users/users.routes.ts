import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { trailOf } from '../audit/audit.js';
import { personOf, requireAuth, tenantOf } from '../auth/auth.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { CursorQuery, parseCursorQuery } from '../http/pagination.js';
import { CursorPage, Envelope, StringEnum } from '../http/schemas.js';
import { inviteUser } from './invites.service.js';
import { listUsers } from './users.queries.js';
import { NotifyEmail, TeamUserResource, teamUserResource, USER_AVAILABILITY, USER_ROLES } from './users.resources.js';
import { addTeamUser, changeOwnUser, changeTeamUser } from './users.service.js';

const UserParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'the user id' }) });
const Name = Type.String({ minLength: 1, maxLength: 200, description: 'display name' });
const Roles = Type.Array(StringEnum(USER_ROLES), {
  maxItems: 10,
  description: 'admin and/or agent; `operator` is granted only by the platform operator (422 here)',
});

export const TeamUserCreate = Type.Object(
  {
    name: Name,
    email: Type.String({ format: 'email', maxLength: 320, description: 'sign-in e-mail, unique across the service' }),
    password: Type.Optional(
      Type.String({
        minLength: 8,
        maxLength: 1024,
        description: 'at least 8 characters; without it the user is invited by e-mail to choose their own (docs/accounts.md)',
      }),
    ),
    roles: Type.Optional(Roles),
  },
  { additionalProperties: false },
);

export const TeamUserPatch = Type.Object(
  {
    name: Type.Optional(Name),
    roles: Type.Optional(Roles),
    active: Type.Optional(Type.Boolean({ description: 'false ends the user’s sessions, tokens and sockets at once' })),
    maxOpenThreads: Type.Optional(
      Type.Union([Type.Integer({ minimum: 0, maximum: 100_000 }), Type.Null()], {
        description: 'open assigned threads routing stops at; null = no cap',
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const OwnUserPatch = Type.Object(
  {
    name: Type.Optional(Name),
    availability: Type.Optional(
      StringEnum(USER_AVAILABILITY, { description: 'routing gives threads only to `online` users; going online routes the waiting ones' }),
    ),
    notify: Type.Optional(
      Type.Object(
        { email: Type.Optional(Type.Partial(NotifyEmail, { additionalProperties: false })) },
        {
          additionalProperties: false,
          description: 'which notifications are e-mailed to you while you have no socket open; the fields you leave out keep their value',
        },
      ),
    ),
  },
  { additionalProperties: false },
);

/**
 * The team: `/v1/users`. Anyone of the workspace may list it (agents pick assignees from
 * it); only workspace admins (a JWT admin or an `admin`-scoped key) add and change users,
 * and never platform operators (docs/security.md).
 */
export const usersRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const admin = requireAuth(deps, { scope: 'admin' });

  app.get(
    '/',
    {
      preValidation: requireAuth(deps),
      schema: { summary: 'List the workspace’s users', querystring: CursorQuery, response: { 200: CursorPage(TeamUserResource) } },
    },
    async (request) => {
      const auth = tenantOf(request);
      const page = await listUsers(deps.db, auth.workspaceId, parseCursorQuery(request.query), deps.now());
      const self = auth.kind === 'api_key' ? null : auth.userId;
      return envelope(
        request,
        page.items.map((row) => teamUserResource(row, row.id === self)),
        page.meta,
      );
    },
  );

  app.post(
    '/',
    {
      preValidation: admin,
      schema: {
        summary: 'Add a user to the workspace',
        body: TeamUserCreate,
        response: { 201: Envelope(TeamUserResource) },
      },
    },
    async (request, reply) => {
      const auth = tenantOf(request);
      const { password, ...invitee } = { ...request.body, roles: request.body.roles ?? [] };
      const user =
        password === undefined
          ? await inviteUser(deps, auth.workspaceId, auth.kind === 'api_key' ? null : auth.userId, invitee, trailOf(request))
          : await addTeamUser(deps, auth.workspaceId, { ...invitee, password }, trailOf(request));
      reply.code(201);
      return envelope(request, user);
    },
  );

  app.patch(
    '/me',
    {
      preValidation: requireAuth(deps, { kinds: ['user'] }),
      schema: {
        summary: 'Change your own name, availability or notification e-mails',
        body: OwnUserPatch,
        response: { 200: Envelope(TeamUserResource) },
      },
    },
    async (request) => {
      const auth = personOf(request);
      return envelope(request, await changeOwnUser(deps, auth.workspaceId, auth.userId, request.body));
    },
  );

  app.patch(
    '/:id',
    {
      preValidation: admin,
      schema: {
        summary: 'Rename a user, change their roles, or (de)activate them',
        params: UserParams,
        body: TeamUserPatch,
        response: { 200: Envelope(TeamUserResource) },
      },
    },
    async (request) => {
      const auth = tenantOf(request);
      const caller = auth.kind === 'api_key' ? null : auth.userId;
      return envelope(request, await changeTeamUser(deps, auth.workspaceId, caller, request.params.id, request.body, trailOf(request)));
    },
  );
};
