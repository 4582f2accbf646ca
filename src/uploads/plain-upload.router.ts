// POST /broker/private/vod/upload/{guid} (and the ID-token twin): one request, the raw file as the body. For curl users
// and small files; large files and unreliable links use the resumable tus endpoint.
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import type { EngineContext } from '../../kernel/context.js';
import { engineError, isEngineError } from '../../kernel/core/errors.js';
import { diskFullReason, isDiskFull } from '../../kernel/core/disk-full.js';
import { brokerRoute, type RouteSpec } from '../../kernel/http/route.js';
import { guidParams } from '../vod/vod.schema.js';
import { storedFileName, type VodService } from '../vod/vod.service.js';

/** Largest single-request upload; bigger files go through tus. */
export const PLAIN_UPLOAD_LIMIT = 2 * 1024 ** 3;

const EXT_BY_TYPE: Record<string, string> = {
  'video/mp4': '.mp4', 'video/quicktime': '.mov', 'video/x-matroska': '.mkv', 'video/webm': '.webm', 'video/mp2t': '.ts',
  'video/x-msvideo': '.avi', 'video/mpeg': '.mpg',
};

const uploadQuery = z.object({ fileName: z.string().min(1).max(512).optional() });

export function plainUploadRoutes(ctx: EngineContext, vod: VodService): RouteSpec[] {
  return brokerRoute({
    method: 'post', path: '/vod/upload/:guid', tag: 'uploads', params: guidParams, query: uploadQuery,
    summary: 'Upload the source file of a VOD in one request (raw body, Content-Type video/* or application/octet-stream, up to 2 GiB)',
    handler: async ({ params, query, principal, req }) => {
      const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (!type.startsWith('video/') && type !== 'application/octet-stream') {
        throw engineError('UNSUPPORTED_MEDIA', 'send the file as the raw body with Content-Type video/* or application/octet-stream');
      }
      const declared = Number(req.headers['content-length'] ?? NaN);
      if (declared > PLAIN_UPLOAD_LIMIT) throw engineError('PAYLOAD_TOO_LARGE', `a single-request upload takes at most 2 GiB; use the tus endpoint`);
      const source = await vod.owned(params.guid, principal!.organizationId);
      vod.assertNotBusy(source);
      const original = query.fileName ?? (typeof source.meta.originalFileName === 'string' ? source.meta.originalFileName : `${params.guid}${EXT_BY_TYPE[type] ?? '.mp4'}`);
      const name = storedFileName(original, ctx.clock.nowMs(), EXT_BY_TYPE[type] ?? '');
      await mkdir(vod.uploadsDir, { recursive: true });
      const target = path.join(vod.uploadsDir, name);
      const partial = `${target}.part`;
      let bytes = 0;
      const limit = new Transform({
        transform(chunk: Buffer, _enc, next) {
          bytes += chunk.length;
          if (bytes > PLAIN_UPLOAD_LIMIT) next(engineError('PAYLOAD_TOO_LARGE', 'a single-request upload takes at most 2 GiB; use the tus endpoint'));
          else next(null, chunk);
        },
      });
      try {
        await pipeline(req, limit, createWriteStream(partial));
      } catch (e) {
        await rm(partial, { force: true });
        if (isEngineError(e)) throw e;
        if (isDiskFull(e)) throw await vod.uploadFailedOnFullDisk(params.guid, e);
        throw engineError('VALIDATION_FAILED', `the upload was interrupted: ${e instanceof Error ? e.message : String(e)}`);
      }
      if (bytes === 0) {
        await rm(partial, { force: true });
        throw engineError('VALIDATION_FAILED', 'the request body is empty: send the file as the body');
      }
      try {
        await rename(partial, target);
      } catch (e) {
        await rm(partial, { force: true });
        if (isDiskFull(e)) throw await vod.uploadFailedOnFullDisk(params.guid, e);
        throw e;
      }
      const status = await vod.uploaded(params.guid, name, original);
      return { status: true, data: { guid: params.guid, fileName: name, size: bytes, status } };
    },
  });
}
