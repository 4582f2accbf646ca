import { z } from 'zod';
import type { EngineContext } from '../../kernel/context.js';
import { engineError, notFound } from '../../kernel/core/errors.js';
import { newId } from '../../kernel/core/ids.js';
import { route, type RouteSpec } from '../../kernel/http/route.js';
import { fixedFieldsShape, takeUnchanged } from '../http/unchanged-fields.js';
import type { ChannelService } from '../channels/channel.service.js';
import type { BlueprintCatalog } from '../blueprints/blueprint.catalog.js';
import { org } from '../../kernel/http/principal.js';
import { syncWorkflowSubscriptions } from '../notifications/workflow-subscriptions.js';
import { LOCKED_STATUSES, scheduleSchema, WORKFLOW_STATUSES, workflowBodySchema, workflowIdParams, workflowListQuery, type WorkflowBody, type WorkflowStatus } from './workflow.schema.js';
import { contentColumns, type NewWorkflow, type Workflow, type WorkflowStore } from './workflow.store.js';

/** The answer of GET /workflows, items of workflowView(workflow, false) (documented only, as every response schema). */
const workflowItem = z.object({
  id: z.string(), name: z.string(), description: z.string(), status: z.enum(WORKFLOW_STATUSES), statusReason: z.string().nullable(),
  blueprintId: z.string().nullable(), created: z.string(), region: z.string(), tags: z.array(z.string()),
  sourceWorkflowId: z.string().optional(), schedule: scheduleSchema.optional(),
});
export const workflowList = z.object({ items: z.array(workflowItem) });

export function workflowView(workflow: Workflow, detail: boolean) {
  return {
    id: workflow.id,
    name: workflow.name,
    description: workflow.description ?? '',
    status: workflow.status,
    statusReason: workflow.statusReason ?? null,
    blueprintId: workflow.blueprintId ?? null,
    created: new Date(workflow.createdAt).toISOString(),
    region: workflow.region,
    tags: workflow.tags,
    ...(workflow.sourceWorkflowId ? { sourceWorkflowId: workflow.sourceWorkflowId } : {}),
    ...(workflow.schedule ? { schedule: workflow.schedule } : {}),
    ...(detail
      ? { subscriptions: workflow.subscriptions, inputWhitelistCIDRs: workflow.inputWhitelistCIDRs, blueprint: workflow.blueprint }
      : {}),
  };
}

function content(ctx: EngineContext, body: WorkflowBody): Omit<NewWorkflow, 'organizationId'> {
  return {
    name: body.name,
    description: body.description || undefined,
    blueprint: body.blueprint,
    region: body.region ?? ctx.config.defaultRegion,
    regionGiven: body.region !== undefined,
    tags: body.tags ?? [],
    subscriptions: body.subscriptions ?? [],
    inputWhitelistCIDRs: body.inputWhitelistCIDRs ?? [],
    schedule: body.schedule,
  };
}

/** An embedded blueprint may be custom (no id), but an id it carries must name a catalog blueprint (issue 20, defect 4). */
function assertKnownBlueprint(catalog: BlueprintCatalog, body: WorkflowBody): void {
  const id = body.blueprint.id;
  if (typeof id === 'string' && !catalog.get(id)) {
    throw engineError('BLUEPRINT_NOT_FOUND', `blueprint.id: ${JSON.stringify(id)} names no blueprint of GET /blueprints; drop the id to embed a custom blueprint`);
  }
}

/** Read-only fields of GET /workflows/{id} a PUT may carry unchanged (issue 20, defect 5). */
const WORKFLOW_FIXED_FIELDS = {
  id: 'it is the id of the workflow',
  created: 'it is the creation time',
  blueprintId: 'it is the id of the embedded blueprint: change blueprint.id instead',
  sourceWorkflowId: 'it names the workflow this one was copied from',
} as const;
/** Moved by the channel state machine, not by a PUT: ignored. */
const WORKFLOW_VOLATILE_FIELDS = ['status', 'statusReason'] as const;

const UNLOCKED = WORKFLOW_STATUSES.filter((status) => !LOCKED_STATUSES.includes(status));

/** Spec 4.2.4, 4.2.5 and the paths DESIGN.md adds: GET/PUT/DELETE /workflows/{id} under the lock rule of 3.1. */
export function workflowRoutes(ctx: EngineContext, workflows: WorkflowStore, channels: ChannelService, catalog: BlueprintCatalog): RouteSpec[] {
  const body = workflowBodySchema(ctx.config.regions);
  return [
    route({
      method: 'post', path: '/workflows', tag: 'live', summary: 'Create a workflow from a complete blueprint', body,
      handler: async ({ body: input, principal }) => {
        assertKnownBlueprint(catalog, input);
        const id = newId();
        const workflow = { organizationId: org(principal), ...content(ctx, input) };
        await ctx.store.db.transaction().execute(async (trx) => {
          await workflows.insert(trx, id, workflow, ctx.clock.nowMs());
          await syncWorkflowSubscriptions(ctx, trx, { id, ...workflow });
        });
        return { id };
      },
    }),
    route({
      method: 'get', path: '/workflows', tag: 'live', summary: 'List workflows; tags=a,b (all of them), status=X,Y (any), sort=asc|desc',
      query: workflowListQuery, response: workflowList,
      handler: async ({ query, principal }) => {
        const statuses = query.status ? query.status.split(',').map((s) => s.trim().toUpperCase()).filter(Boolean) : undefined;
        const wanted = query.tags ? query.tags.split(',').map((t) => t.trim().toLowerCase()).filter(Boolean) : [];
        const items = (await workflows.list(org(principal), { sort: query.sort, ...(statuses ? { statuses } : {}) }))
          .filter((w) => {
            const tags = new Set(w.tags.map((t) => t.toLowerCase()));
            return wanted.every((tag) => tags.has(tag));
          });
        return { items: items.map((w) => workflowView(w, false)) };
      },
    }),
    route({
      method: 'get', path: '/workflows/:id', tag: 'live', summary: 'Read a workflow with its embedded blueprint', params: workflowIdParams,
      handler: async ({ params, principal }) => {
        const workflow = await workflows.get(org(principal), params.id);
        if (!workflow) throw notFound('Workflow', params.id);
        return workflowView(workflow, true);
      },
    }),
    route({
      method: 'put', path: '/workflows/:id', tag: 'live', summary: 'Replace a workflow (refused while it is locked)', params: workflowIdParams,
      body: body.extend(fixedFieldsShape(WORKFLOW_FIXED_FIELDS, WORKFLOW_VOLATILE_FIELDS)),
      handler: async ({ params, body: sent, principal }) => {
        const organizationId = org(principal);
        const workflow = await workflows.get(organizationId, params.id);
        if (!workflow) throw notFound('Workflow', params.id);
        // blueprintId follows the blueprint sent, so it is compared with the id of that blueprint.
        const current = { ...workflowView(workflow, true), blueprintId: typeof sent.blueprint.id === 'string' ? sent.blueprint.id : null };
        const input = takeUnchanged(sent, current, WORKFLOW_FIXED_FIELDS, WORKFLOW_VOLATILE_FIELDS) as WorkflowBody;
        assertKnownBlueprint(catalog, input);
        if (LOCKED_STATUSES.includes(workflow.status)) throw engineError('WORKFLOW_LOCKED', `workflow ${params.id} is ${workflow.status}`);
        const columns = { ...contentColumns(content(ctx, input)), updated_at: ctx.clock.nowMs() };
        // A new schedule is considered from scratch; the stop still owed to a running scheduled channel stays.
        const reschedule = JSON.stringify(workflow.schedule ?? null) !== JSON.stringify(input.schedule ?? null) ? { schedule_handled_at: null } : {};
        await ctx.store.db.transaction().execute(async (trx) => {
          if (!(await workflows.patch(organizationId, params.id, UNLOCKED, { ...columns, ...reschedule }, trx))) {
            throw engineError('WORKFLOW_LOCKED', `workflow ${params.id} changed state meanwhile; retry`);
          }
          await syncWorkflowSubscriptions(ctx, trx, { id: params.id, organizationId, subscriptions: input.subscriptions ?? [] });
        });
        const updated = await workflows.get(organizationId, params.id);
        return updated ? workflowView(updated, true) : { id: params.id };
      },
    }),
    route({
      method: 'delete', path: '/workflows/:id', tag: 'live', summary: 'Delete a workflow; a running channel is stopped first', params: workflowIdParams,
      handler: async ({ params, principal }) => {
        const status: WorkflowStatus | 'DELETED' = await channels.deleteWorkflow(org(principal), params.id);
        return { id: params.id, status };
      },
    }),
  ];
}
