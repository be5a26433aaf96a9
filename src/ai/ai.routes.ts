import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireAuth, tenantOf } from '../auth/auth.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { AppError } from '../http/errors.js';
import { BigId } from '../http/ids.js';
import { Envelope } from '../http/schemas.js';
import { MessageResource } from '../messaging/messaging.resources.js';
import { systemResolve } from '../net/address-guard.js';
import { rewriteText, suggestReply, summarizeThread } from './ai.service.js';
import { AiClient } from './ai-client.js';

const Params = Type.Object({ id: Type.With(BigId, { description: 'the thread id' }) });
const PromptOptions = Type.Object(
  {
    includeNotes: Type.Optional(
      Type.Boolean({ description: "put the thread's private notes in the prompt too (people only; default false)" }),
    ),
  },
  { additionalProperties: false },
);
const Suggestion = Type.Object({
  text: Type.String({ description: 'a draft for the agent to edit; nothing was sent' }),
  sources: Type.Array(Type.Integer(), { description: 'the messages of similar resolved threads the prompt held' }),
});
const RewriteBody = Type.Object(
  {
    text: Type.String({ minLength: 1, maxLength: 10_000 }),
    instruction: Type.String({
      pattern: '^(shorter|friendlier|formal|fix|translate:[^\\n]{2,40})$',
      description: '"shorter", "friendlier", "formal", "fix" or "translate:<language>"',
    }),
  },
  { additionalProperties: false },
);

/**
 * AI assist on the workspace's own model (docs/ai.md): drafts, summaries and rewrites. The
 * model's answer is text for the agent; nothing here sends, assigns or changes a thread, but
 * the summary, which is stored as a private note.
 */
export const aiRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const ai = new AiClient({ allowPrivate: deps.config.allowPrivateAi, resolve: deps.resolveHost ?? systemResolve });
  app.addHook('onClose', () => ai.close());
  const aiDeps = { ...deps, ai };
  app.addHook('preValidation', requireAuth(deps, { scope: 'write' }));

  app.post(
    '/threads/:id/ai/suggest-reply',
    {
      schema: {
        summary: 'Draft a reply with the workspace’s model',
        description:
          'Answers `{ text, sources }`; nothing is sent. With `accept: text/event-stream` the draft streams as it is written: ' +
          '`delta` events `{ text }`, then one `done` event `{ text, sources }` (or an `error` event with the error body).',
        params: Params,
        body: Type.Optional(PromptOptions),
        response: { 200: Envelope(Suggestion) },
      },
    },
    async (request, reply) => {
      const auth = tenantOf(request);
      const includeNotes = request.body?.includeNotes === true;
      if (!String(request.headers.accept ?? '').includes('text/event-stream'))
        return envelope(request, await suggestReply(aiDeps, auth, request.params.id, { includeNotes }));
      // Headers go out with the first delta: until then a failure is an ordinary error answer.
      let streaming = false;
      const event = (name: string, data: unknown) => reply.raw.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
      const start = () => {
        if (streaming) return;
        streaming = true;
        reply.hijack();
        reply.raw.writeHead(200, {
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-store',
          'x-request-id': request.id,
        });
      };
      try {
        const suggestion = await suggestReply(aiDeps, auth, request.params.id, {
          includeNotes,
          onDelta: (text) => {
            start();
            event('delta', { text });
          },
        });
        start();
        event('done', suggestion);
      } catch (err) {
        if (!streaming) throw err;
        const known = err instanceof AppError ? err : undefined;
        if (!known) request.log.error({ err }, 'suggest-reply stream failed');
        event('error', {
          error: { code: known?.code ?? 'internal_error', message: known?.message ?? 'internal error' },
          meta: { requestId: request.id },
        });
      }
      reply.raw.end();
      return reply;
    },
  );

  app.post(
    '/threads/:id/ai/summarize',
    {
      schema: {
        summary: 'Summarize a thread into a private note',
        description: 'Answers 201 with the note (`kind: "note"`, `authorId` the caller, `ai: true`).',
        params: Params,
        body: Type.Optional(PromptOptions),
        response: { 201: Envelope(MessageResource) },
      },
    },
    async (request, reply) => {
      const note = await summarizeThread(aiDeps, tenantOf(request), request.params.id, {
        includeNotes: request.body?.includeNotes === true,
      });
      return reply.code(201).send(envelope(request, note));
    },
  );

  app.post(
    '/ai/rewrite',
    { schema: { summary: 'Rewrite a draft', body: RewriteBody, response: { 200: Envelope(Type.Object({ text: Type.String() })) } } },
    async (request) => envelope(request, await rewriteText(aiDeps, tenantOf(request), request.body.text, request.body.instruction)),
  );
};
