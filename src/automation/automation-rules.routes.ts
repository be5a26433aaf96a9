import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { recordAudit, trailOf } from '../audit/audit.js';
import { requireAuth, tenantOf } from '../auth/auth.js';
import type { Deps } from '../deps.js';
import { deleted, envelope } from '../http/envelope.js';
import { errors } from '../http/errors.js';
import { IntId } from '../http/ids.js';
import { Deleted, Envelope } from '../http/schemas.js';
import { deleteRule, listRules } from './automation-rules.queries.js';
import { AutomationRuleCreate, AutomationRulePatch, AutomationRuleResource, automationRuleResource } from './automation-rules.resources.js';
import { changeAutomationRule, createAutomationRule } from './automation-rules.service.js';

const Params = Type.Object({ id: Type.With(IntId, { description: 'the automation rule id' }) });

/** `/v1/automation-rules` (docs/automation.md): admins read and write them, listed whole in position order. */
export const automationRulesRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.addHook('preValidation', requireAuth(deps, { scope: 'admin' }));

  app.get(
    '/',
    {
      schema: {
        summary: 'List automation rules in position order, with their runs and last error',
        response: { 200: Envelope(Type.Array(AutomationRuleResource)) },
      },
    },
    async (request) => envelope(request, (await listRules(deps.db, tenantOf(request).workspaceId)).map(automationRuleResource)),
  );

  app.post(
    '/',
    { schema: { summary: 'Create an automation rule', body: AutomationRuleCreate, response: { 201: Envelope(AutomationRuleResource) } } },
    async (request, reply) => {
      const created = await createAutomationRule(deps, trailOf(request), tenantOf(request).workspaceId, request.body);
      reply.code(201);
      return envelope(request, created);
    },
  );

  app.patch(
    '/:id',
    {
      schema: {
        summary: 'Change an automation rule (enable, disable, reorder with position)',
        params: Params,
        body: AutomationRulePatch,
        response: { 200: Envelope(AutomationRuleResource) },
      },
    },
    async (request) =>
      envelope(request, await changeAutomationRule(deps, trailOf(request), tenantOf(request).workspaceId, request.params.id, request.body)),
  );

  app.delete(
    '/:id',
    { schema: { summary: 'Delete an automation rule', params: Params, response: { 200: Envelope(Deleted) } } },
    async (request) => {
      await deps.db.transaction().execute(async (trx) => {
        if (!(await deleteRule(trx, tenantOf(request).workspaceId, request.params.id))) throw errors.notFound('automation rule');
        await recordAudit(trx, trailOf(request), 'automation_rule.deleted', { type: 'automation_rule', id: request.params.id });
      });
      return deleted(request, request.params.id);
    },
  );
};
