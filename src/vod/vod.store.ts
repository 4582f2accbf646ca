// VOD sources (spec 2.12): metadata, status (3.6), encode progress and the records read back from the outputs.
import type { Db, Tx } from '../../kernel/store/database.js';
import { fromJson, toJson } from '../../kernel/store/database.js';
import type { VodRecords } from '../../vod-encoder/records.types.js';
import type { EncodeProgress } from '../../vod-encoder/ffmpeg-runner.js';
import { notify } from '../notifications/outbox.js';
import { captionsEvent, vodEncodeEvent } from '../notifications/events.js';

/**
 * Spec 3.6 filter values (archive, complete, Encode-later, error) plus the in-progress states:
 * created (metadata only) → uploaded → queued → encoding → complete | error; Encode-later when uploaded with encode false.
 */
export const VOD_STATUSES = ['created', 'uploaded', 'queued', 'encoding', 'complete', 'error', 'Encode-later', 'archive'] as const;
export type VodStatus = (typeof VOD_STATUSES)[number];

export interface VodSourceTable {
  id: string;
  organization_id: string;
  meta: string;
  status: string;
  status_reason: string | null;
  progress: string | null;
  encode: number;
  source_file: string | null;
  original_file_name: string | null;
  output_dir: string | null;
  records: string | null;
  captions: string | null;
  created_at: number;
  updated_at: number;
}

declare module '../../kernel/store/database.js' {
  interface Tables {
    vod_sources: VodSourceTable;
  }
}

export interface CaptionsState {
  status: 'queued' | 'running' | 'complete' | 'error';
  reason?: string;
  language?: string;
  vttUrl?: string;
  hlsPlaylistUrl?: string;
  cues?: number;
}

export interface VodSource {
  guid: string;
  organizationId: string;
  meta: Record<string, unknown>;
  status: VodStatus;
  statusReason: string | null;
  progress: EncodeProgress | null;
  encode: boolean;
  /** Stored file name under DATA_DIR/uploads (md5 + original extension). */
  sourceFile: string | null;
  originalFileName: string | null;
  /** Output directory relative to DATA_DIR/media (vod/<guid>/<version>). */
  outputDir: string | null;
  records: VodRecords | null;
  captions: CaptionsState | null;
  createdAt: number;
  updatedAt: number;
}

function toSource(row: VodSourceTable): VodSource {
  return {
    guid: row.id,
    organizationId: row.organization_id,
    meta: fromJson<Record<string, unknown>>(row.meta, {}),
    status: row.status as VodStatus,
    statusReason: row.status_reason,
    progress: fromJson<EncodeProgress | null>(row.progress, null),
    encode: Number(row.encode) === 1,
    sourceFile: row.source_file,
    originalFileName: row.original_file_name,
    outputDir: row.output_dir,
    records: fromJson<VodRecords | null>(row.records, null),
    captions: fromJson<CaptionsState | null>(row.captions, null),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

const titleOf = (source: VodSource): string | null => (typeof source.meta.title === 'string' ? source.meta.title : null);

export class VodStore {
  constructor(private readonly db: Db, private readonly now: () => number) {}

  async create(organizationId: string, id: string, meta: Record<string, unknown>, encode: boolean): Promise<VodSource> {
    const now = this.now();
    const row: VodSourceTable = {
      id, organization_id: organizationId, meta: toJson(meta), status: 'created', status_reason: null, progress: null,
      encode: encode ? 1 : 0, source_file: null, original_file_name: typeof meta.originalFileName === 'string' ? meta.originalFileName : null,
      output_dir: null, records: null, captions: null, created_at: now, updated_at: now,
    };
    await this.db.insertInto('vod_sources').values(row).execute();
    return toSource(row);
  }

  /** Without organizationId: the open read endpoints (spec 5.6) and the worker. */
  async get(id: string, organizationId?: string, db: Db | Tx = this.db): Promise<VodSource | undefined> {
    let q = db.selectFrom('vod_sources').selectAll().where('id', '=', id);
    if (organizationId) q = q.where('organization_id', '=', organizationId);
    const row = await q.executeTakeFirst();
    return row ? toSource(row) : undefined;
  }

  async list(status?: string): Promise<VodSource[]> {
    let q = this.db.selectFrom('vod_sources').selectAll();
    if (status) q = q.where('status', '=', status);
    return (await q.orderBy('created_at', 'desc').orderBy('id').execute()).map(toSource);
  }

  async updateMeta(trx: Tx, id: string, meta: Record<string, unknown>, encode: boolean): Promise<void> {
    await trx.updateTable('vod_sources').set({ meta: toJson(meta), encode: encode ? 1 : 0, updated_at: this.now() })
      .where('id', '=', id).execute();
  }

  async setSourceFile(id: string, sourceFile: string, originalFileName: string, status: VodStatus): Promise<void> {
    await this.db.updateTable('vod_sources')
      .set({ source_file: sourceFile, original_file_name: originalFileName, status, status_reason: null, progress: null, updated_at: this.now() })
      .where('id', '=', id).execute();
  }

  async setStatus(id: string, status: VodStatus, reason: string | null = null, also: { progress?: null } = {}): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const now = this.now();
      await trx.updateTable('vod_sources').set({ status, status_reason: reason, ...also, updated_at: now }).where('id', '=', id).execute();
      if (status === 'error') await this.notifyEncode(trx, id, now);
    });
  }

  /** Says why something failed without changing the status (a new upload of a VOD that keeps its earlier source). */
  async setStatusReason(id: string, reason: string): Promise<void> {
    await this.db.updateTable('vod_sources').set({ status_reason: reason, updated_at: this.now() }).where('id', '=', id).execute();
  }

  async setProgress(id: string, progress: EncodeProgress | null): Promise<void> {
    await this.db.updateTable('vod_sources').set({ progress: progress ? toJson(progress) : null }).where('id', '=', id).execute();
  }

  /** A finished encode: records, output dir and status complete in one write (never a half-written record). */
  async complete(id: string, outputDir: string, records: VodRecords, progress: EncodeProgress): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const now = this.now();
      await trx.updateTable('vod_sources')
        .set({ status: 'complete', status_reason: null, output_dir: outputDir, records: toJson(records), progress: toJson(progress),
          captions: null, updated_at: now })
        .where('id', '=', id).execute();
      await this.notifyEncode(trx, id, now);
    });
  }

  async setCaptions(id: string, captions: CaptionsState, records?: VodRecords): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const now = this.now();
      await trx.updateTable('vod_sources')
        .set({ captions: toJson(captions), ...(records ? { records: toJson(records) } : {}), updated_at: now })
        .where('id', '=', id).execute();
      if (captions.status !== 'complete' && captions.status !== 'error') return;
      const source = await this.get(id, undefined, trx);
      if (source) await notify(trx, captionsEvent({
        organizationId: source.organizationId, guid: id, title: titleOf(source), ok: captions.status === 'complete', reason: captions.reason ?? null,
        language: captions.language ?? null, vttUrl: captions.vttUrl ?? null, cues: captions.cues ?? null, at: now,
      }));
    });
  }

  /** vod.encode.complete or vod.encode.failed, from the row as just written. */
  private async notifyEncode(trx: Tx, id: string, now: number): Promise<void> {
    const source = await this.get(id, undefined, trx);
    if (!source) return;
    await notify(trx, vodEncodeEvent({
      organizationId: source.organizationId, guid: id, title: titleOf(source), ok: source.status === 'complete', reason: source.statusReason,
      hlsUrl: source.records?.formats?.hls?.cdnUrl ?? null, at: now,
    }));
  }
}
