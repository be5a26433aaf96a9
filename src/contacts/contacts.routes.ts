import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { trailOf } from '../audit/audit.js';
import { requireAuth, tenantOf } from '../auth/auth.js';
import { readFrom } from '../db/replica.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { CursorQuery, parseCursorQuery } from '../http/pagination.js';
import { CursorPage, Envelope, Nullable } from '../http/schemas.js';
import { ContactAttributes } from './contact-attributes.js';
import { listHandles, searchContacts } from './contacts.queries.js';
import { ContactResource, contactResource } from './contacts.resources.js';
import { changeContact, getContact, mergeContacts } from './contacts.service.js';
import { requestErasure } from './erasure.js';

const ContactId = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'the contact id' });
const Params = Type.Object({ id: ContactId });
const ListQuery = Type.Object({
  ...CursorQuery.properties,
  q: Type.Optional(Type.String({ maxLength: 200, description: 'case-insensitive substring of a name, an e-mail or a handle' })),
});

export const ContactPatchBody = Type.Object(
  {
    name: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200, description: 'display name; null clears it' }))),
    email: Type.Optional(Nullable(Type.String({ format: 'email', maxLength: 320, description: 'e-mail address; null clears it' }))),
    phone: Type.Optional(
      Nullable(
        Type.String({
          pattern: '^\\+?[0-9][0-9 ().-]{1,48}[0-9]$',
          description: 'phone number, digits with an optional leading +; null clears it',
        }),
      ),
    ),
    attributes: Type.Optional(ContactAttributes),
  },
  { additionalProperties: false },
);

export const ContactMergeBody = Type.Object(
  {
    contactId: Type.Integer({
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
      description: 'the contact merged into this one, then deleted',
    }),
  },
  { additionalProperties: false },
);

const ErasureAccepted = Type.Object({ contactId: Type.Integer() }, { title: 'ErasureAccepted' });

/** `/v1/contacts`: the people behind the threads; list and search, read, edit, merge, erase. */
export const contactsRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.addHook('preValidation', requireAuth(deps));

  app.get(
    '/',
    { schema: { summary: 'List or search contacts', querystring: ListQuery, response: { 200: CursorPage(ContactResource) } } },
    async (request) => {
      const db = readFrom(deps, request);
      const page = await searchContacts(db, tenantOf(request).workspaceId, request.query.q?.trim(), parseCursorQuery(request.query));
      const handles = await listHandles(
        db,
        page.items.map((c) => c.id),
      );
      return envelope(
        request,
        page.items.map((c) => contactResource(c, handles)),
        page.meta,
      );
    },
  );

  app.get('/:id', { schema: { summary: 'Get a contact', params: Params, response: { 200: Envelope(ContactResource) } } }, async (request) =>
    envelope(request, await getContact(deps, tenantOf(request).workspaceId, request.params.id)),
  );

  app.patch(
    '/:id',
    {
      schema: {
        summary: 'Change a contact’s name, e-mail, phone or attributes',
        params: Params,
        body: ContactPatchBody,
        response: { 200: Envelope(ContactResource) },
      },
    },
    async (request) => envelope(request, await changeContact(deps, tenantOf(request).workspaceId, request.params.id, request.body)),
  );

  app.post(
    '/:id/merge',
    {
      schema: {
        summary: 'Merge another contact into this one',
        params: Params,
        body: ContactMergeBody,
        response: { 200: Envelope(ContactResource) },
      },
    },
    async (request) =>
      envelope(request, await mergeContacts(deps, tenantOf(request).workspaceId, request.params.id, request.body.contactId)),
  );

  app.post(
    '/:id/erase',
    {
      preValidation: requireAuth(deps, { scope: 'admin' }),
      schema: {
        summary: 'Erase a contact and everything of the person',
        description:
          'The contact is a tombstone at once (404 everywhere); a job removes its messages’ words and files, its handles, search entries, raw deliveries and outbound events, then announces `contact.erased` (docs/privacy.md).',
        params: Params,
        response: { 202: Envelope(ErasureAccepted) },
      },
    },
    async (request, reply) => {
      await requestErasure(deps, tenantOf(request).workspaceId, request.params.id, trailOf(request));
      reply.code(202);
      return envelope(request, { contactId: request.params.id });
    },
  );
};
