// Operations on a running channel (spec 4.2.11, 4.2.12): dynamic ad breaks, alarms, graphs, input switching.
import { randomInt } from 'node:crypto';
import { z } from 'zod';
import type { EngineContext } from '../../kernel/context.js';
import { engineError, notFound } from '../../kernel/core/errors.js';
import { route, type RouteSpec } from '../../kernel/http/route.js';
import { CHANNEL_METRICS } from '../../kernel/seams/channel-runtime.js';
import { blueprintInputs } from '../blueprints/blueprint.schema.js';
import type { ChannelService } from './channel.service.js';
import { org } from '../../kernel/http/principal.js';
import { channelParams } from './channel.router.js';
import { listAlarms, listMetric, recordAdBreak } from './channel-telemetry.store.js';

const GRAPH_RANGE_MAX_MS = 14 * 24 * 3600_000;

/** The answer of GET /channels/{workflowId}/graphs (documented only, as every response schema). */
export const graphAnswer = z.object({
  workflowId: z.string(), metric: z.enum(CHANNEL_METRICS), unit: z.string(), from: z.string(), to: z.string(),
  points: z.array(z.object({ timestamp: z.string(), value: z.number() })),
});

const METRIC_UNITS: Record<(typeof CHANNEL_METRICS)[number], string> = {
  NETWORK_IN: 'Megabits/Second', NETWORK_OUT: 'Megabits/Second', DROPPED_FRAMES: 'Count', ACTIVE_ALERTS: 'Count',
  INPUT_VIDEO_FRAME_RATE: 'Frames/Second', FILL_MS: 'Milliseconds', UDP_INPUT_LOSS: 'Packets', SVQ_TIME: 'Percent',
};

export function channelOpsRoutes(ctx: EngineContext, channels: ChannelService): RouteSpec[] {
  const running = async (organizationId: string, workflowId: string) => {
    const workflow = await channels.workflows.get(organizationId, workflowId);
    if (!workflow) throw notFound('Channel of workflow', workflowId);
    const runtime = channels.runtime();
    if (workflow.status !== 'RUNNING' || !runtime) throw engineError('CHANNEL_NOT_RUNNING', `the channel of workflow ${workflowId} is ${workflow.status}`);
    return { workflow, runtime };
  };
  const upstream = (error: unknown) => engineError('UPSTREAM_FAILED', `the channel runtime refused: ${error instanceof Error ? error.message : String(error)}`);
  return [
    route({
      method: 'post', path: '/channels/:workflowId/dynamic-ads', tag: 'live', summary: 'Schedule an ad break 15 to 20 s from now',
      params: channelParams, body: z.strictObject({ duration: z.number().int().min(1).max(600) }),
      handler: async ({ params, body, principal }) => {
        const { workflow, runtime } = await running(org(principal), params.workflowId);
        const now = ctx.clock.nowMs();
        // 15 s leaves the packager time to mark the manifests; the spec allows up to 20 s (spec 8).
        const adBreak = { spliceEventId: randomInt(1, 2 ** 31 - 1), startsAt: now + 15_000 + randomInt(0, 5_001), duration: body.duration };
        const placed = await runtime.insertAdBreak(workflow.id, { ...adBreak, requestedAt: now }).catch((error: unknown) => { throw upstream(error); });
        // the runtime puts the break on a segment boundary: the answer gives the start the manifests carry
        if (placed) adBreak.startsAt = placed.startsAt;
        await recordAdBreak(ctx.store.db, { organizationId: workflow.organizationId, workflowId: workflow.id, ...adBreak, now });
        return { workflowId: workflow.id, spliceEventId: adBreak.spliceEventId, startsAt: new Date(adBreak.startsAt).toISOString(), duration: adBreak.duration };
      },
    }),
    route({
      method: 'get', path: '/channels/:workflowId/alarms', tag: 'live', summary: 'Active alarms of a channel, or all with history=true',
      params: channelParams, query: z.object({ history: z.enum(['true', 'false']).default('false') }),
      handler: async ({ params, query, principal }) => {
        const workflow = await channels.workflows.get(org(principal), params.workflowId);
        if (!workflow) throw notFound('Channel of workflow', params.workflowId);
        return { workflowId: workflow.id, items: await listAlarms(ctx.store.db, workflow.id, query.history === 'true') };
      },
    }),
    route({
      method: 'get', path: '/channels/:workflowId/graphs', tag: 'live', summary: 'Samples of one channel metric between from and to (default: the last hour)',
      params: channelParams,
      response: graphAnswer,
      query: z.object({ metric: z.enum(CHANNEL_METRICS), from: z.iso.datetime({ offset: true }).optional(), to: z.iso.datetime({ offset: true }).optional() }),
      handler: async ({ params, query, principal }) => {
        const workflow = await channels.workflows.get(org(principal), params.workflowId);
        if (!workflow) throw notFound('Channel of workflow', params.workflowId);
        const to = query.to ? Date.parse(query.to) : ctx.clock.nowMs();
        const from = query.from ? Date.parse(query.from) : to - 3600_000;
        if (from >= to) throw engineError('VALIDATION_FAILED', 'from must be before to', { fields: [{ field: 'from', message: 'must be before to' }] });
        if (to - from > GRAPH_RANGE_MAX_MS) throw engineError('RANGE_TOO_LONG', 'a graph covers at most 14 days');
        const points = await listMetric(ctx.store.db, workflow.id, query.metric, from, to);
        return { workflowId: workflow.id, metric: query.metric, unit: METRIC_UNITS[query.metric], from: new Date(from).toISOString(), to: new Date(to).toISOString(), points };
      },
    }),
    route({
      method: 'post', path: '/channels/:workflowId/input-switch', tag: 'live', summary: 'Switch a running channel to another of its inputs',
      params: channelParams, body: z.strictObject({ input: z.string().min(1).max(128) }),
      handler: async ({ params, body, principal }) => {
        const { workflow, runtime } = await running(org(principal), params.workflowId);
        const names = blueprintInputs(workflow.blueprint).map((input) => input.name);
        if (!names.includes(body.input)) {
          throw engineError('VALIDATION_FAILED', `input must be one of ${names.join(', ')}`, { fields: [{ field: 'input', message: `must be one of ${names.join(', ')}` }] });
        }
        await runtime.switchInput(workflow.id, body.input).catch((error: unknown) => { throw upstream(error); });
        await channels.workflows.patch(workflow.organizationId, workflow.id, ['RUNNING'], { active_input: body.input });
        return { workflowId: workflow.id, activeInput: body.input };
      },
    }),
  ];
}
