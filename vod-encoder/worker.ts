// The `worker` role: runs the jobs of the encode queue. encode: probe → ladder → encode (progress into the VOD record
// and the logs) → records read back from the outputs → status complete; any failure → status error with the reason.
// captions: speech → WebVTT → HLS SUBTITLES rendition + DASH text AdaptationSet → records again.
// creative: ad creatives as HLS renditions matching a content ladder, for the SSAI proxy.
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import { attachCaptions, generateCaptions } from './captions.js';
import { encodeVod } from './encode.js';
import { withoutServerPaths, type VodFailure } from './errors.js';
import type { EncodeProgress } from './ffmpeg-runner.js';
import { chooseLadder } from './ladder.js';
import { prepareCreative, type TargetLadder } from './prepare-creative.js';
import { probeMedia } from './probe.js';
import { JobCanceledError, JobLeaseLostError, type EncodeQueue, type JobContext } from './queue.js';
import { buildRecords } from './records.js';
import { instrumented, type WorkerMetrics } from './metrics.js';
import type { VodRecords } from './records.types.js';

/** What the worker needs of the VOD store (src/vod/vod.store.ts implements it). */
export interface VodJobStore {
  get(id: string): Promise<{
    guid: string; status: string; sourceFile: string | null; outputDir: string | null; records: VodRecords | null;
  } | undefined>;
  setStatus(id: string, status: 'encoding' | 'error', reason?: string | null): Promise<void>;
  setProgress(id: string, progress: EncodeProgress | null): Promise<void>;
  complete(id: string, outputDir: string, records: VodRecords, progress: EncodeProgress): Promise<void>;
  setCaptions(id: string, captions: {
    status: 'running' | 'complete' | 'error'; reason?: string; language?: string; vttUrl?: string; hlsPlaylistUrl?: string; cues?: number;
  }, records?: VodRecords): Promise<void>;
}

export interface VodWorkerDeps {
  store: VodJobStore;
  /** DATA_DIR/uploads: the stored sources. */
  uploadsDir: string;
  /** DATA_DIR/media: served at PUBLIC_URL/media. */
  mediaDir: string;
  /** PUBLIC_URL/media (read at job time: the public URL is known only after listen). */
  mediaBaseUrl: () => string;
  /** `destBucket` of the records: the name of the media store. */
  destBucket: string;
  /** Cache of prepared ad creatives (DATA_DIR/media/creatives). */
  creativeCacheDir: string;
  preset?: string;
  logger: Logger;
  metrics?: WorkerMetrics;
}

export interface EncodeJobResult {
  ok: boolean;
  error?: VodFailure;
}

/** A failure as the public statusReason: "The file is not a playable media file (moov atom not found)", no server paths. */
const describe = (f: VodFailure): string => `${f.message} (${withoutServerPaths(f.reason)})`;

export function registerVodWorker(queue: EncodeQueue, deps: VodWorkerDeps): void {
  const { metrics } = deps;
  queue.handle('encode', instrumented(metrics, 'encode', (payload, job) => runEncode(String(payload.guid), job, deps)));
  queue.handle('captions', instrumented(metrics, 'captions', (payload, job) => runCaptions(String(payload.guid), job, deps)));
  queue.handle('creative', instrumented(metrics, 'creative', async (payload, job) => {
    const ladder = payload.ladder as TargetLadder;
    const prepared = await prepareCreative(String(payload.mediaFileUrl), ladder, {
      cacheDir: deps.creativeCacheDir, logger: job.logger, signal: job.signal, ...(deps.preset ? { preset: deps.preset } : {}),
      ...(typeof payload.creativeId === 'string' ? { creativeId: payload.creativeId } : {}),
    });
    // Stopped by the closing queue: the job runs again at the next start rather than finishing as failed.
    if (job.signal.aborted) throw new JobCanceledError();
    return prepared;
  }));
}

async function runEncode(guid: string, job: JobContext, deps: VodWorkerDeps): Promise<EncodeJobResult> {
  const { store, logger } = { store: deps.store, logger: job.logger.child({ guid }) };
  const source = await store.get(guid);
  if (!source) {
    logger.warn('the VOD source of this job no longer exists');
    return { ok: false };
  }
  // A run whose job went to another worker writes nothing more: the VOD is that run's (queue.ts `owned`), and its
  // files vanishing under this one (that run cleaning up) are no failure of the VOD.
  const stillOwned = async (): Promise<void> => {
    if (job.owned && !(await job.owned())) throw new JobLeaseLostError();
  };
  const fail = async (f: VodFailure): Promise<EncodeJobResult> => {
    await stillOwned();
    await store.setStatus(guid, 'error', describe(f));
    await store.setProgress(guid, null);
    logger.warn({ code: f.code, reason: f.reason }, 'VOD encode failed');
    return { ok: false, error: f };
  };
  if (!source.sourceFile) return fail({ code: 'VOD_NOT_MEDIA', message: 'No source file', reason: 'nothing was uploaded for this VOD' });
  await store.setStatus(guid, 'encoding');
  await store.setProgress(guid, { percent: 0, speedX: 0, etaSec: 0, stage: 'probe' });
  const sourcePath = path.join(deps.uploadsDir, source.sourceFile);
  const probed = await probeMedia(sourcePath);
  if (!probed.ok) return fail(probed.error);
  if (job.signal.aborted) throw new JobCanceledError();

  const rel = `vod/${guid}/e${Date.now().toString(36)}`;
  const outDir = path.join(deps.mediaDir, rel);
  let lastWrite = 0;
  let lastLog = -1;
  const handle = encodeVod(sourcePath, {
    outDir, mediaInfo: probed.value, ladder: chooseLadder(probed.value), logger,
    ...(deps.preset ? { preset: deps.preset } : {}),
    onProgress: (p) => {
      job.progress(p);
      const now = Date.now();
      if (now - lastWrite >= 500 || p.percent >= 100) {
        lastWrite = now;
        void store.setProgress(guid, p).catch(() => undefined);
      }
      const decile = Math.floor(p.percent / 10);
      if (decile > lastLog) {
        lastLog = decile;
        logger.info({ percent: p.percent, speed: `${p.speedX}x`, etaSec: p.etaSec, stage: p.stage }, 'VOD encode progress');
      }
    },
  });
  const onAbort = (): void => handle.cancel();
  job.signal.addEventListener('abort', onAbort, { once: true });
  const result = await handle.done;
  job.signal.removeEventListener('abort', onAbort);
  if (job.signal.aborted) {
    await rm(outDir, { recursive: true, force: true }).catch(() => undefined);
    throw new JobCanceledError();
  }
  if (!result.ok) return fail(result.error);

  const records = await buildRecords({
    outDir, sourceGuid: guid, cdnBase: `${deps.mediaBaseUrl()}/${rel}`, destBucket: deps.destBucket, keyPrefix: rel,
  });
  if (!records.ok) {
    await rm(outDir, { recursive: true, force: true }).catch(() => undefined);
    return fail(records.error);
  }
  // (the record is written once, by the run that owns the job: this one's files go when it does not)
  await stillOwned().catch(async (e: unknown) => {
    await rm(outDir, { recursive: true, force: true }).catch(() => undefined);
    throw e;
  });
  const done: EncodeProgress = { percent: 100, speedX: Math.round((probed.value.durationSec / (result.value.elapsedMs / 1000)) * 100) / 100, etaSec: 0, stage: 'done' };
  await store.complete(guid, rel, records.value, done);
  // Older encodes of this source (re-encodes, interrupted runs) are no longer referenced by any record.
  const versionsDir = path.join(deps.mediaDir, 'vod', guid);
  for (const name of await readdir(versionsDir).catch(() => [] as string[])) {
    if (name !== path.basename(rel)) await rm(path.join(versionsDir, name), { recursive: true, force: true }).catch(() => undefined);
  }
  logger.info({ outputDir: rel, elapsedMs: result.value.elapsedMs, speed: `${done.speedX}x` }, 'VOD encode complete');
  return { ok: true };
}

async function runCaptions(guid: string, job: JobContext, deps: VodWorkerDeps): Promise<EncodeJobResult> {
  const { store } = deps;
  const logger = job.logger.child({ guid });
  const source = await store.get(guid);
  if (!source?.sourceFile || !source.outputDir || !source.records) {
    const reason = 'the VOD has no finished encode';
    if (source) await store.setCaptions(guid, { status: 'error', reason });
    return { ok: false, error: { code: 'VOD_CAPTIONS_FAILED', message: 'Speech recognition failed', reason } };
  }
  await store.setCaptions(guid, { status: 'running' });
  job.progress({ percent: 0, speedX: 0, etaSec: 0, stage: 'captions' });
  const generated = await generateCaptions(path.join(deps.uploadsDir, source.sourceFile), { logger, signal: job.signal });
  if (job.signal.aborted) throw new JobCanceledError();
  if (!generated.ok) {
    await store.setCaptions(guid, { status: 'error', reason: describe(generated.error) });
    return { ok: false, error: generated.error };
  }
  const outDir = path.join(deps.mediaDir, source.outputDir);
  const base = `${deps.mediaBaseUrl()}/${source.outputDir}`;
  try {
    const attached = await attachCaptions(outDir, generated.value.vtt, source.records.durationSec);
    const records = await buildRecords({ outDir, sourceGuid: guid, cdnBase: base, destBucket: deps.destBucket, keyPrefix: source.outputDir });
    if (!records.ok) throw new Error(describe(records.error));
    await store.setCaptions(guid, {
      status: 'complete', language: 'en', vttUrl: `${base}/${attached.vttPath}`, hlsPlaylistUrl: `${base}/${attached.playlistPath}`,
      cues: generated.value.cues.length,
    }, records.value);
    logger.info({ cues: generated.value.cues.length }, 'captions added to the HLS master and the DASH manifest');
    return { ok: true };
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    await store.setCaptions(guid, { status: 'error', reason });
    return { ok: false, error: { code: 'VOD_CAPTIONS_FAILED', message: 'Speech recognition failed', reason } };
  }
}
