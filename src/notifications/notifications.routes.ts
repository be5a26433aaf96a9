import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { personOf, requireAuth } from '../auth/auth.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { errors } from '../http/errors.js';
import { BigId } from '../http/ids.js';
import { CursorQuery, parseCursorQuery } from '../http/pagination.js';
import { CursorPage, Envelope, StringEnum } from '../http/schemas.js';
import { listNotifications, markAllNotificationsRead, markNotificationRead } from './notifications.queries.js';
import { NotificationResource, notificationResource } from './notifications.resources.js';

export const NotificationsQuery = Type.Object({
  ...CursorQuery.properties,
  unread: Type.Optional(StringEnum(['true', 'false'], { description: 'true: only the unread' })),
});
const Params = Type.Object({ id: Type.With(BigId, { description: 'the notification id' }) });

/**
 * `/v1/notifications` (docs/teams.md, "Mentions and notifications"): a signed-in user's own,
 * never anyone else's. A notification is someone's: an API key has none and is refused (403).
 */
export const notificationsRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.addHook('preValidation', requireAuth(deps, { kinds: ['user'] }));

  app.get(
    '/',
    {
      schema: {
        summary: 'List your notifications, newest first',
        querystring: NotificationsQuery,
        response: { 200: CursorPage(NotificationResource) },
      },
    },
    async (request) => {
      const page = await listNotifications(
        deps.db,
        personOf(request).userId,
        request.query.unread === 'true',
        parseCursorQuery(request.query),
      );
      return envelope(request, page.items.map(notificationResource), page.meta);
    },
  );

  app.post(
    '/read-all',
    {
      schema: {
        summary: 'Mark all your notifications read',
        response: { 200: Envelope(Type.Object({ read: Type.Integer({ minimum: 0, description: 'notifications this marked read' }) })) },
      },
    },
    async (request) => envelope(request, { read: await markAllNotificationsRead(deps.db, personOf(request).userId, deps.now()) }),
  );

  app.post(
    '/:id/read',
    { schema: { summary: 'Mark one of your notifications read', params: Params, response: { 200: Envelope(NotificationResource) } } },
    async (request) => {
      const row = await markNotificationRead(deps.db, personOf(request).userId, request.params.id, deps.now());
      if (!row) throw errors.notFound('notification');
      return envelope(request, notificationResource(row));
    },
  );
};
