import { z } from 'zod';
import type { EngineContext } from '../../kernel/context.js';
import { notFound } from '../../kernel/core/errors.js';
import { route, type RouteSpec } from '../../kernel/http/route.js';
import { org } from '../../kernel/http/principal.js';
import type { ChannelService } from './channel.service.js';
import { channelView } from './channel.view.js';

const workflowsBody = z.strictObject({ workflows: z.array(z.string().min(1).max(64)).min(1).max(50) });
export const channelParams = z.object({ workflowId: z.string().min(1).max(64) });

/** Spec 4.2.6-4.2.9: start, list, read and stop channels; a channel is addressed by its workflow id. */
export function channelRoutes(ctx: EngineContext, channels: ChannelService): RouteSpec[] {
  return [
    route({
      method: 'post', path: '/channels', tag: 'live', summary: 'Start one channel per workflow id (a DONE workflow is duplicated first)',
      body: workflowsBody,
      handler: async ({ body, principal }) => ({ items: await channels.start(org(principal), body.workflows) }),
    }),
    route({
      method: 'delete', path: '/channels', tag: 'live', summary: 'Stop the channels of the workflows; idempotent',
      body: workflowsBody,
      handler: async ({ body, principal }) => ({ items: await channels.stop(org(principal), body.workflows) }),
    }),
    route({
      method: 'get', path: '/channels', tag: 'live', summary: 'List the channels started from workflows',
      query: z.object({ sort: z.enum(['asc', 'desc']).default('desc') }),
      handler: async ({ query, principal }) => {
        const workflows = await channels.workflows.list(org(principal), { sort: query.sort, started: true });
        return { items: await Promise.all(workflows.map((workflow) => channelView(ctx, workflow))) };
      },
    }),
    route({
      method: 'get', path: '/channels/:workflowId', tag: 'live', summary: 'Read the channel of a workflow with its endpoints and archive',
      params: channelParams,
      handler: async ({ params, principal }) => {
        const workflow = await channels.workflows.get(org(principal), params.workflowId);
        if (!workflow) throw notFound('Channel of workflow', params.workflowId);
        return channelView(ctx, workflow);
      },
    }),
  ];
}
