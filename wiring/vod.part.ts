// VOD: metadata, uploads (tus + single request), the encode queue and its worker, the records and the media store.
import path from 'node:path';
import { sql } from 'kysely';
import { Counter } from 'prom-client';
import type { EnginePart } from '../kernel/part.js';
import type { EngineContext } from '../kernel/context.js';
import { configureTools } from '../vod-encoder/ffmpeg-runner.js';
import type { VodResult } from '../vod-encoder/errors.js';
import type { PreparedCreative, TargetLadder } from '../vod-encoder/prepare-creative.js';
import type { EncodeQueue } from '../vod-encoder/queue.js';
import { DatabaseEncodeQueue } from '../vod-encoder/queue-db.js';
import { PgBossEncodeQueue } from '../vod-encoder/queue-pgboss.js';
import { JobLeases } from '../vod-encoder/job-leases.js';
import { registerVodWorker } from '../vod-encoder/worker.js';
import { createWorkerMetrics } from '../vod-encoder/metrics.js';
import { mediaMount } from '../src/media/media.mount.js';
import { plainUploadRoutes } from '../src/uploads/plain-upload.router.js';
import { tusMount } from '../src/uploads/tus.mount.js';
import { uploadSettingsRoutes } from '../src/uploads/upload-settings.router.js';
import { vodRoutes } from '../src/vod/vod.router.js';
import { MEDIA_BUCKET, VodService } from '../src/vod/vod.service.js';

/** Ad creatives as HLS renditions matching the content ladder, through the encode queue at creative priority. */
export type PrepareCreativeService = (
  mediaFileUrl: string, targetLadder: TargetLadder, opts?: { creativeId?: string; timeoutMs?: number },
) => Promise<VodResult<PreparedCreative>>;

declare module '../kernel/context.js' {
  interface EngineServices {
    encodeQueue?: EncodeQueue;
    prepareCreative?: PrepareCreativeService;
    vod?: VodService;
  }
}

async function createQueue(ctx: EngineContext): Promise<EncodeQueue> {
  const logger = ctx.logger.child({ component: 'encode-queue' });
  if (ctx.config.databaseUrl && ctx.store.dialect === 'postgres') {
    // pg-boss keeps its tables next to ours: `<schema>_boss` (pgboss for public), so isolated engines never share jobs.
    const result = await sql<{ schema: string }>`select current_schema() as schema`.execute(ctx.store.db);
    const schema = result.rows[0]?.schema ?? 'public';
    const lost = new Counter({ name: 'vod_jobs_given_back_total', help: 'Jobs of a worker that stopped renewing their lease, given back to the queue', labelNames: ['queue'] as const, registers: [ctx.metrics.registry] });
    return new PgBossEncodeQueue({
      connectionString: ctx.config.databaseUrl, schema: schema === 'public' ? 'pgboss' : `${schema}_boss`, logger,
      leases: (onLost) => new JobLeases(ctx.store.db, {
        logger,
        onLost: async (queue, jobId) => {
          await onLost(queue, jobId);
          lost.inc({ queue });
        },
      }),
    });
  }
  return new DatabaseEncodeQueue({ db: ctx.store.db, logger, now: () => Date.now() });
}

function services(ctx: EngineContext): { vod: VodService; queue: EncodeQueue } {
  const { vod, encodeQueue } = ctx.services;
  if (!vod || !encodeQueue) throw new Error('the vod part was not initialized');
  return { vod, queue: encodeQueue };
}

export const vodPart: EnginePart = {
  name: 'vod',
  roles: ['api', 'worker', 'ssai'],
  init: async (ctx) => {
    configureTools({ ffmpegPath: ctx.config.ffmpegPath, ffprobePath: ctx.config.ffprobePath });
    const queue = await createQueue(ctx);
    ctx.services.encodeQueue = queue;
    ctx.services.vod = new VodService(ctx, () => queue);
    ctx.onClose(() => queue.close());
    ctx.services.prepareCreative = async (mediaFileUrl, targetLadder, opts = {}) => {
      const id = await queue.enqueue('creative', { mediaFileUrl, ladder: targetLadder, ...(opts.creativeId ? { creativeId: opts.creativeId } : {}) });
      const job = await queue.waitFor(id, opts.timeoutMs ?? 10 * 60_000);
      if (job.state === 'done' && job.output && typeof job.output === 'object' && 'ok' in job.output) {
        return job.output as VodResult<PreparedCreative>;
      }
      return { ok: false, error: { code: 'VOD_CREATIVE_TRANSCODE_FAILED', message: 'The creative could not be transcoded', reason: job.error ?? 'the job failed' } };
    };
  },
  routes: (ctx) => {
    const { vod, queue } = services(ctx);
    return [...vodRoutes(ctx, vod, () => queue), ...uploadSettingsRoutes(ctx), ...plainUploadRoutes(ctx, vod)];
  },
  mounts: (ctx) => {
    const { vod } = services(ctx);
    const mounts = [mediaMount(vod.mediaDir)];
    if (ctx.config.roles.includes('api')) mounts.push(tusMount(ctx, vod));
    return mounts;
  },
  start: async (ctx) => {
    if (!ctx.config.roles.includes('worker')) return;
    const { vod, queue } = services(ctx);
    registerVodWorker(queue, {
      store: vod.store,
      uploadsDir: vod.uploadsDir,
      mediaDir: vod.mediaDir,
      mediaBaseUrl: () => vod.mediaBaseUrl(),
      destBucket: MEDIA_BUCKET,
      creativeCacheDir: path.join(vod.mediaDir, 'creatives'),
      logger: ctx.logger.child({ component: 'vod-worker' }),
      metrics: createWorkerMetrics(ctx.metrics.registry),
    });
    await queue.start();
  },
};
