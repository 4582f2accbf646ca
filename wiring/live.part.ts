// Live control plane (spec 4.2): blueprints, regions, workflows, channels with their state machine, schedules,
// dynamic ads, alarms, graphs and input switching. Channels really run in a ChannelRuntime (the packager).
import type { EnginePart } from '../kernel/part.js';
import type { EngineContext } from '../kernel/context.js';
import { BlueprintCatalog } from '../src/blueprints/blueprint.catalog.js';
import { blueprintRoutes } from '../src/blueprints/blueprint.router.js';
import { regionRoutes } from '../src/regions/region.router.js';
import { WorkflowStore } from '../src/workflows/workflow.store.js';
import { workflowRoutes } from '../src/workflows/workflow.router.js';
import { ChannelService } from '../src/channels/channel.service.js';
import { channelRoutes } from '../src/channels/channel.router.js';
import { channelOpsRoutes } from '../src/channels/channel-ops.router.js';
import { Scheduler } from '../src/schedules/scheduler.js';
import '../src/channels/channel-runtime.service.js';

export interface LiveServices {
  catalog: BlueprintCatalog;
  workflows: WorkflowStore;
  channels: ChannelService;
  scheduler: Scheduler;
}

declare module '../kernel/context.js' {
  interface EngineServices {
    live?: LiveServices;
  }
}

function live(ctx: EngineContext): LiveServices {
  if (!ctx.services.live) throw new Error('the live part was not initialized');
  return ctx.services.live;
}

export const livePart: EnginePart = {
  name: 'live',
  roles: ['api'],
  init: (ctx) => {
    const workflows = new WorkflowStore(ctx.store.db);
    const channels = new ChannelService(ctx, workflows);
    const scheduler = new Scheduler(ctx, workflows, channels);
    ctx.services.live = { catalog: BlueprintCatalog.load(), workflows, channels, scheduler };
    // closers run in reverse: the scheduler stops before the transitions in flight are awaited
    ctx.onClose(() => channels.close());
    ctx.onClose(() => scheduler.stop());
  },
  routes: (ctx) => {
    const { catalog, workflows, channels } = live(ctx);
    return [
      ...blueprintRoutes(catalog),
      ...regionRoutes(ctx),
      ...workflowRoutes(ctx, workflows, channels, catalog),
      ...channelRoutes(ctx, channels),
      ...channelOpsRoutes(ctx, channels),
    ];
  },
  start: async (ctx) => {
    const { channels, scheduler } = live(ctx);
    await channels.recover();
    // catch-up: runs due while the engine was down start now when their stop time has not passed
    await scheduler.tick();
    scheduler.start();
  },
};
