// Channels in a cluster (DESIGN.md "Processes and scale"). A process with the packager role takes channel commands from
// the shared database for its runtime and records that runtime's events when no live control plane runs beside it; a
// process with the api role but no runtime of its own sends its channel calls to the packagers as commands.
// The single process (every role) keeps calling its local runtime directly.
import { Counter } from 'prom-client';
import type { EnginePart } from '../kernel/part.js';
import { systemClock } from '../kernel/core/clock.js';
import { ChannelCommandWorker } from '../packager/channel-command-worker.js';
import { RemoteChannelRuntime } from '../src/channels/remote-channel-runtime.js';
import { redisCommandWakeup } from '../src/channels/channel-command-wakeup.js';
import { adoptChannels, channelCommandQueue, HEARTBEAT_MS } from '../src/channels/channel-command.store.js';
import { recordRuntimeEvent } from '../src/channels/runtime-events.js';
import { WorkflowStore } from '../src/workflows/workflow.store.js';
import '../src/channels/channel-runtime.service.js';
import './packager.part.js';

declare module '../kernel/context.js' {
  interface EngineServices {
    channelCommandWorker?: ChannelCommandWorker;
  }
}

export const channelCommandsPart: EnginePart = {
  name: 'channel-commands',
  roles: ['api', 'packager'],
  init: (ctx) => {
    const local = ctx.config.roles.includes('packager') ? ctx.services.channelRuntime : undefined;
    const logger = ctx.logger.child({ component: 'channel-commands' });
    const wakeup = ctx.config.redisUrl ? redisCommandWakeup(ctx.config.redisUrl, ctx.config.redisPrefix, logger) : undefined;
    if (wakeup) ctx.onClose(() => wakeup.close());
    if (local) {
      const commands = new Counter({ name: 'engine_channel_commands_run_total', help: 'Channel commands this packager ran for other processes, by kind and outcome', labelNames: ['kind', 'outcome'] as const, registers: [ctx.metrics.registry] });
      const worker = new ChannelCommandWorker({
        queue: channelCommandQueue(ctx.store.db, ctx.store.dialect), runtime: local, clock: systemClock, logger, publicUrl: () => ctx.config.publicUrl, commands,
        // one id for the packager: its heartbeat tells other hosts whether the channels its work dirs name are alive
        ...(ctx.services.liveRuntime ? { id: ctx.services.liveRuntime.id } : {}),
        ...(wakeup ? { wakeup } : {}),
      });
      ctx.services.channelCommandWorker = worker;
      ctx.onClose(() => worker.close());
      if (!ctx.services.live && local.subscribe) {
        // no control plane in this process: the events of the channels it runs are recorded here, or nowhere
        const workflows = new WorkflowStore(ctx.store.db);
        const unsubscribe = local.subscribe((event) => {
          void recordRuntimeEvent(workflows, event).catch((error: unknown) => logger.warn({ err: error, workflowId: event.workflowId }, 'a runtime event could not be recorded'));
        });
        ctx.onClose(unsubscribe);
      }
    } else if (ctx.config.roles.includes('api') && !ctx.services.channelRuntime) {
      const commands = new Counter({ name: 'engine_channel_commands_sent_total', help: 'Channel commands sent to packager processes, by kind and outcome', labelNames: ['kind', 'outcome'] as const, registers: [ctx.metrics.registry] });
      // wall time, not ctx.clock: heartbeats and deadlines are compared across processes
      ctx.services.channelRuntime = new RemoteChannelRuntime({ db: ctx.store.db, clock: systemClock, logger, commands, ...(wakeup ? { wakeup } : {}) });
    }
  },
  start: async (ctx) => {
    const worker = ctx.services.channelCommandWorker;
    if (!worker) return;
    await worker.start();
    const runtime = ctx.services.liveRuntime;
    if (!runtime) return;
    // Channels this runtime runs must be owned by this packager, so that calls from other api processes reach them:
    // the ones the packager part resumed after a restart (under the new id), and the ones a control plane in this
    // process started on its local runtime directly (npm start beside api-only processes).
    const adopt = async () => {
      const running = await ctx.store.db.selectFrom('workflows').select('id').where('status', 'in', ['STARTING', 'RUNNING', 'STOPPING']).execute();
      const here = running.map((row) => row.id).filter((id) => runtime.channel(id));
      if (here.length === 0) return;
      const owned = await ctx.store.db.selectFrom('channel_owners').select('workflow_id').where('workflow_id', 'in', here).where('packager_id', '=', worker.id).execute();
      const mine = new Set(owned.map((row) => row.workflow_id));
      await adoptChannels(ctx.store.db, worker.id, here.filter((id) => !mine.has(id)), systemClock.nowMs());
    };
    const guarded = () => adopt().catch((error: unknown) => ctx.logger.warn({ err: error }, 'channels could not be adopted'));
    await guarded();
    const timer = setInterval(() => void guarded(), HEARTBEAT_MS);
    timer.unref();
    ctx.onClose(() => clearInterval(timer));
  },
};
