// Glue between uploads, the VOD store and the encode queue: the one place that decides what a finished upload does.
import { createHash } from 'node:crypto';
import path from 'node:path';
import type { EngineContext } from '../../kernel/context.js';
import { engineError, type EngineError } from '../../kernel/core/errors.js';
import { diskFullReason } from '../../kernel/core/disk-full.js';
import type { EncodeQueue } from '../../vod-encoder/queue.js';
import { VodStore, type VodSource, type VodStatus } from './vod.store.js';

export const SOURCES_BUCKET = 'sources';
export const MEDIA_BUCKET = 'media';

/** Spec 4.7: md5 of (original name + epoch ms) plus the original extension. */
export function storedFileName(originalName: string, epochMs: number, fallbackExt = ''): string {
  const ext = (path.extname(originalName) || fallbackExt).toLowerCase().replace(/[^.a-z0-9]/g, '').slice(0, 10);
  return createHash('md5').update(`${originalName}${epochMs}`).digest('hex') + ext;
}

export class VodService {
  readonly store: VodStore;
  readonly uploadsDir: string;
  readonly mediaDir: string;

  constructor(private readonly ctx: EngineContext, private readonly queue: () => EncodeQueue) {
    this.store = new VodStore(ctx.store.db, () => ctx.clock.nowMs());
    this.uploadsDir = path.join(ctx.config.dataDir, 'uploads');
    this.mediaDir = path.join(ctx.config.dataDir, 'media');
  }

  mediaBaseUrl(): string {
    return `${this.ctx.config.publicUrl}/media`;
  }

  /** A source of the caller's organization, or 404. */
  async owned(guid: string, organizationId: string): Promise<VodSource> {
    const source = await this.store.get(guid, organizationId);
    if (!source) throw engineError('NOT_FOUND', `VOD ${guid} does not exist`);
    return source;
  }

  /** Refuses a new upload or encode while the source is waiting for or inside an encode. */
  assertNotBusy(source: VodSource): void {
    if (source.status === 'queued' || source.status === 'encoding') {
      throw engineError('CONFLICT', `VOD ${source.guid} is ${source.status}; wait until the encode ends`);
    }
  }

  /**
   * An upload the full disk cut off (nothing of it is kept): the VOD says why in its statusReason, and the caller gets
   * 507 INSUFFICIENT_STORAGE (returned, to throw). A VOD that already had a source keeps its status: only the new file failed.
   */
  async uploadFailedOnFullDisk(guid: string, cause: unknown): Promise<EngineError> {
    const reason = diskFullReason('the upload');
    this.ctx.logger.error({ guid, err: cause }, 'an upload failed: the disk of the data directory is full');
    const source = await this.store.get(guid).catch(() => undefined);
    if (source && !source.sourceFile) await this.store.setStatus(guid, 'error', reason).catch(() => undefined);
    else if (source) await this.store.setStatusReason(guid, reason).catch(() => undefined);
    return engineError('INSUFFICIENT_STORAGE', reason);
  }

  /** A stored upload: encode it now, or keep it in Encode-later when its metadata said encode false. */
  async uploaded(guid: string, storedName: string, originalName: string): Promise<VodStatus> {
    const source = await this.store.get(guid);
    if (!source) throw engineError('NOT_FOUND', `VOD ${guid} does not exist`);
    if (!source.encode) {
      await this.store.setSourceFile(guid, storedName, originalName, 'Encode-later');
      this.ctx.logger.info({ guid, file: storedName }, 'VOD uploaded; encode later');
      return 'Encode-later';
    }
    await this.store.setSourceFile(guid, storedName, originalName, 'uploaded');
    await this.enqueueEncode(guid);
    this.ctx.logger.info({ guid, file: storedName }, 'VOD uploaded; encode queued');
    return 'queued';
  }

  /** Marks the source queued and enqueues its encode; a job that cannot be queued leaves it in error, not queued forever. */
  async enqueueEncode(guid: string): Promise<string> {
    await this.store.setStatus(guid, 'queued', null, { progress: null });
    try {
      return await this.queue().enqueue('encode', { guid });
    } catch (error) {
      await this.store.setStatus(guid, 'error', `the encode could not be queued: ${error instanceof Error ? error.message : String(error)}`);
      throw error;
    }
  }
}
