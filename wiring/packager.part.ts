// The packager part (DESIGN.md): runs started channels for real in this process and serves their HLS on /live.
// Registered as ctx.services.channelRuntime, the interface the live control plane calls.
import { copyFile, link, mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { createLiveMetrics } from '../packager/live-metrics.js';
import { pushFrontFactory, pushProtocolOf } from '../packager/ingest/push-front-factory.js';
import { PUSH_PROTOCOLS } from '../packager/ingest/push-ingest.js';
import type { EnginePart } from '../kernel/part.js';
import '../src/channels/channel-runtime.service.js';
import { LiveRuntime } from '../packager/live-runtime.js';
import { liveMount } from '../packager/hls/live-mount.js';
import { mp4FrontAwaitingSample, SampleMedia } from '../packager/sample-media.js';
import { newId } from '../kernel/core/ids.js';
import { storedFileName } from '../src/vod/vod.service.js';
import { probeMedia } from '../vod-encoder/probe.js';
import type { EngineContext } from '../kernel/context.js';
import type { ChannelSpec } from '../kernel/seams/channel-runtime.js';
import { STALE_MS } from '../kernel/seams/channel-commands.js';
import type { ChannelRecords } from '../kernel/seams/channel-records.js';
import { channelRecords } from '../src/channels/channel-records.js';
import type { ChannelState, Outage } from '../packager/live-channel.js';
import type { ArchiveGap } from '../packager/archive/archive-recorder.js';

declare module '../kernel/context.js' {
  interface EngineServices {
    liveRuntime?: LiveRuntime;
    /** the clip the catalog's MP4 loop blueprint plays, made at start when DATA_DIR lacks it */
    sampleMedia?: SampleMedia;
  }
}

const METRIC_RETENTION_MS = 15 * 24 * 3600_000;
/** how often a packager looks for channels of gone packagers (a gone one is noticed after STALE_MS without beats) */
const SWEEP_MS = 3_000;

/**
 * Spec 2.12: the merged archive as a VOD source with status `archive` (its file doubles as the upload, so it can be
 * encoded). Titled by the workflow's name, with the duration, picture size and file size a library lists (an archive
 * has no encode records to read them from).
 */
async function listArchive(ctx: EngineContext, records: ChannelRecords, info: { spec: ChannelSpec; relativePath: string; url: string; seconds: number; gaps: ArchiveGap[] }): Promise<void> {
  const vod = ctx.services.vod;
  if (!vod) return; // an engine without the VOD part keeps the archive file only
  const guid = newId();
  const originalName = `${info.spec.workflowId}.mp4`;
  const source = path.join(vod.mediaDir, info.relativePath);
  const workflowName = await records.workflowName(info.spec.workflowId);
  const probed = await probeMedia(source);
  const picture = probed.ok ? { width: probed.value.width, height: probed.value.height } : {};
  const sizeBytes = await stat(source).then((s) => s.size, () => undefined);
  await vod.store.create(info.spec.organizationId, guid, {
    type: 'source', title: `Archive of ${workflowName ?? `channel ${info.spec.workflowId}`}`, originalFileName: originalName,
    description: `Archive of the channel of workflow ${info.spec.workflowId}`,
    custom_data: { workflowId: info.spec.workflowId, archiveUrl: info.url, durationSec: info.seconds, gaps: info.gaps, ...picture, ...(sizeBytes !== undefined ? { sizeBytes } : {}) },
  }, false);
  const stored = storedFileName(originalName, ctx.clock.nowMs());
  await mkdir(vod.uploadsDir, { recursive: true });
  const target = path.join(vod.uploadsDir, stored);
  await link(source, target).catch(() => copyFile(source, target));
  await vod.store.setSourceFile(guid, stored, originalName, 'archive');
}

/**
 * The RUNNING channels another live packager runs: its owner file in the shared work dir names a live process, or
 * (no work dir here: packagers sharing the database only) the channel's owner in the database beats.
 */
async function runningElsewhere(records: ChannelRecords, runtime: LiveRuntime, ids: string[]): Promise<Set<string>> {
  const elsewhere = new Set(ids.filter((id) => runtime.runsElsewhere(id)));
  const unknown = ids.filter((id) => !elsewhere.has(id) && !runtime.hasWorkDir(id));
  if (unknown.length === 0) return elsewhere;
  // wall time: heartbeats come from other processes
  const owned = await records.ownedByBeatingPackagers(unknown, Date.now() - STALE_MS).catch(() => []);
  for (const id of owned) elsewhere.add(id);
  return elsewhere;
}

export const packagerPart: EnginePart = {
  name: 'packager',
  roles: ['packager'],
  init: (ctx) => {
    const metrics = createLiveMetrics(ctx.metrics.registry);
    const records = channelRecords(ctx.store.db);
    // samples older than the longest graph range (14 days) are of no use: the series stays bounded
    const prune = setInterval(() => {
      void records.pruneMetrics(ctx.clock.nowMs() - METRIC_RETENTION_MS).catch(() => undefined);
    }, 3600_000);
    prune.unref();
    ctx.onClose(() => clearInterval(prune));
    const runtime = new LiveRuntime({
      metrics,
      ffmpegPath: ctx.config.ffmpegPath, ffprobePath: ctx.config.ffprobePath, dataDir: ctx.config.dataDir, publicUrl: () => ctx.config.publicUrl,
      logger: ctx.logger.child({ component: 'packager' }),
      onArchive: (info) => listArchive(ctx, records, info),
    });
    // push protocols (RTMP_PUSH, SRT_PUSH, RIST, RTP, RTP_FEC): the ingest fronts, managed inputs included
    const push = pushFrontFactory(ctx);
    for (const protocol of PUSH_PROTOCOLS) runtime.fronts.register(protocol, push);
    runtime.fronts.setProtocolResolver((request) => pushProtocolOf(ctx, request));
    const sample = new SampleMedia({ dataDir: ctx.config.dataDir, ffmpegPath: ctx.config.ffmpegPath, logger: ctx.logger.child({ component: 'packager' }) });
        runtime.fronts.register('MP4', mp4FrontAwaitingSample(sample));
    ctx.services.sampleMedia = sample;
    ctx.onClose(() => sample.close());
    ctx.services.liveRuntime = runtime;
    // before any other part's start (the live part's recovery stops channels cut off mid-start): end the encoders a
    // killed engine left behind, keep what their channels need to resume
    runtime.recoverOrphans();
    ctx.services.channelRuntime = runtime;
    ctx.onClose(() => runtime.close());
  },
  mounts: (ctx) => [liveMount(path.join(ctx.config.dataDir, 'live'))],
  start: async (ctx) => {
    const runtime = ctx.services.liveRuntime;
    if (!runtime) return;
    // in the background: a channel that needs the clip before it is made waits for it
    ctx.services.sampleMedia?.start();
    // An engine that was killed (or shut down) left channels RUNNING: resume them, or report them failed; never pretend.
    const states = runtime.takeRecovered();
    const records = channelRecords(ctx.store.db);
    const ids = new Set(await records.runningWorkflowIds().catch(() => [] as string[]));
    const log = ctx.logger.child({ component: 'packager' });
    const resume = (state: ChannelState, why: string, outage?: Outage) => {
      void runtime.resume(state, outage).then(
        () => log.info({ workflowId: state.spec.workflowId }, `channel resumed ${why}`),
        (error: unknown) => {
          const reason = `the channel could not be resumed ${why}: ${error instanceof Error ? error.message : String(error)}`;
          runtime.report({ type: 'failed', workflowId: state.spec.workflowId, reason, at: ctx.clock.nowMs() });
          void runtime.stop(state.spec.workflowId);
        },
      );
    };
    for (const state of states) {
      if (!ids.has(state.spec.workflowId)) {
        await runtime.stop(state.spec.workflowId);
        continue;
      }
      ids.delete(state.spec.workflowId);
      resume(state, 'after an engine restart');
    }
    // the others may run on another packager of this cluster (same data directory, or same database only): those live
    const others = await runningElsewhere(records, runtime, [...ids]);
    for (const id of ids) {
      if (others.has(id)) continue;
      runtime.report({ type: 'failed', workflowId: id, reason: 'the engine restarted and nothing of this channel was left to resume', at: ctx.clock.nowMs() });
    }
    // From now on, every few seconds: RUNNING channels whose packager is gone (died on this host, or stopped beating
    // on another host of the shared volume) are taken over by one survivor, and channels taken from this one end here.
    let sweeping = false;
    // packagers of other hosts seen without a heartbeat, since when: one that just left (a clean shutdown deletes its
    // row before it has halted its encoders) is taken for gone only after STALE_MS more, once its encoders have ended
    const goneSince = new Map<string, number>();
    const sweep = async () => {
      if (sweeping) return;
      sweeping = true;
      try {
        await runtime.fence();
        const orphans = (await records.runningWorkflowIds()).filter((id) => !runtime.channel(id) && runtime.hasWorkDir(id));
        if (orphans.length === 0) return;
        const now = Date.now(); // wall time: heartbeats of other processes
        const alive = new Set(await records.livePackagers(now));
        for (const [id, since] of goneSince) if (alive.has(id) || since < now - 3600_000) goneSince.delete(id);
        const aliveElsewhere = (runtimeId: string): boolean => {
          if (alive.has(runtimeId)) return true;
          const since = goneSince.get(runtimeId) ?? now;
          goneSince.set(runtimeId, since);
          return now - since < STALE_MS;
        };
        for (const id of orphans) {
          const previous = runtime.ownerOf(id);
          const state = runtime.adoptOrphan(id, aliveElsewhere);
          if (state) resume(state, 'after its packager was gone', { reason: `its packager ${previous ?? '(unknown)'} was gone; packager ${runtime.id} took the channel over` });
          else if (state === null) {
            runtime.report({ type: 'failed', workflowId: id, reason: 'its packager was gone and nothing of this channel was left to resume', at: ctx.clock.nowMs() });
            await runtime.stop(id);
          }
        }
      } catch (error) {
        log.warn({ err: error }, 'the channels of gone packagers could not be checked');
      } finally {
        sweeping = false;
      }
    };
    const timer = setInterval(() => void sweep(), SWEEP_MS);
    timer.unref();
    ctx.onClose(() => clearInterval(timer));
  },
};
