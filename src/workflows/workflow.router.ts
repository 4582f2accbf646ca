import type { EngineContext } from '../context.js';
import { engineError, notFound } from '../core/errors.js';
import { newId } from '../core/ids.js';
import { route, type RouteSpec } from '../http/route.js';
import type { ChannelService } from '../channels/channel.service.js';
import { org } from '../auth/principal.js';
import { LOCKED_STATUSES, WORKFLOW_STATUSES, workflowBodySchema, workflowIdParams, workflowListQuery, type WorkflowBody, type WorkflowStatus } from './workflow.schema.js';
import { contentColumns, type NewWorkflow, type Workflow, type WorkflowStore } from './workflow.store.js';

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
    description: body.description,
    blueprint: body.blueprint,
    region: body.region ?? ctx.config.defaultRegion,
    regionGiven: body.region !== undefined,
    tags: body.tags ?? [],
    subscriptions: body.subscriptions ?? [],
    inputWhitelistCIDRs: body.inputWhitelistCIDRs ?? [],
    schedule: body.schedule,
  };
}

const UNLOCKED = WORKFLOW_STATUSES.filter((status) => !LOCKED_STATUSES.includes(status));

/** Spec 4.2.4, 4.2.5 and the paths DESIGN.md adds: GET/PUT/DELETE /workflows/{id} under the lock rule of 3.1. */
export function workflowRoutes(ctx: EngineContext, workflows: WorkflowStore, channels: ChannelService): RouteSpec[] {
  const body = workflowBodySchema(ctx.config.regions);
  return [
    route({
      method: 'post', path: '/workflows', tag: 'live', summary: 'Create a workflow from a complete blueprint', body,
      handler: async ({ body: input, principal }) => {
        const id = newId();
        await ctx.store.db.transaction().execute((trx) => workflows.insert(trx, id, { organizationId: org(principal), ...content(ctx, input) }, ctx.clock.nowMs()));
        return { id };
      },
    }),
    route({
      method: 'get', path: '/workflows', tag: 'live', summary: 'List workflows; tags=a,b (all of them), status=X,Y (any), sort=asc|desc',
      query: workflowListQuery,
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
      method: 'put', path: '/workflows/:id', tag: 'live', summary: 'Replace a workflow (refused while it is locked)', params: workflowIdParams, body,
      handler: async ({ params, body: input, principal }) => {
        const organizationId = org(principal);
        const workflow = await workflows.get(organizationId, params.id);
        if (!workflow) throw notFound('Workflow', params.id);
        if (LOCKED_STATUSES.includes(workflow.status)) throw engineError('WORKFLOW_LOCKED', `workflow ${params.id} is ${workflow.status}`);
        const columns = { ...contentColumns(content(ctx, input)), updated_at: ctx.clock.nowMs() };
        // A new schedule is considered from scratch; the stop still owed to a running scheduled channel stays.
        const reschedule = JSON.stringify(workflow.schedule ?? null) !== JSON.stringify(input.schedule ?? null) ? { schedule_handled_at: null } : {};
        if (!(await workflows.patch(organizationId, params.id, UNLOCKED, { ...columns, ...reschedule }))) {
          throw engineError('WORKFLOW_LOCKED', `workflow ${params.id} changed state meanwhile; retry`);
        }
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
