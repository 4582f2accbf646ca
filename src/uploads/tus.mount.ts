// Resumable uploads (tus 1.0, @tus/server + @tus/file-store) into the source store DATA_DIR/uploads, at
// /broker/upload (ID token) and /broker/private/upload (API key). The Upload-Metadata key `x-engine-meta-metaguid`
// names the VOD metadata the file belongs to; the stored name is md5(original name + epoch ms) + extension.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { mkdirSync } from 'node:fs';
import type express from 'express';
import { FileStore } from '@tus/file-store';
import { Server } from '@tus/server';
import type { EngineContext } from '../../kernel/context.js';
import { engineError, errorBody, isEngineError, type EngineError } from '../../kernel/core/errors.js';
import { isDiskFull } from '../../kernel/core/disk-full.js';
import { resolvePrincipal } from '../auth/authenticate.js';
import type { Principal } from '../../kernel/http/principal.js';
import { sendError } from '../../kernel/http/send-error.js';
import { findBadText } from '../http/validation.js';
import type { AuthMode } from '../../kernel/http/route.js';
import { storedFileName, type VodService } from '../vod/vod.service.js';

/** The tus metadata key that links a file to its VOD metadata (spec: x-<vendor>-meta-metaguid). */
export const METAGUID_KEY = 'x-engine-meta-metaguid';
/** Largest resumable upload. */
export const TUS_UPLOAD_LIMIT = 50 * 1024 ** 3;

const TUS_PATHS: Array<{ path: string; mode: AuthMode }> = [
  { path: '/broker/upload', mode: 'idToken' },
  { path: '/broker/private/upload', mode: 'apiKey' },
];

function tusError(error: EngineError): { status_code: number; body: string } {
  return { status_code: error.status, body: JSON.stringify(errorBody(error)) };
}

/** The VOD guid in an Upload-Metadata header (`key base64,key base64`), if any. */
function metaguidOf(header: string | null): string | undefined {
  for (const pair of (header ?? '').split(',')) {
    const [key, value] = pair.trim().split(' ');
    if (key === METAGUID_KEY && value) return Buffer.from(value, 'base64').toString('utf8');
  }
  return undefined;
}

function originalName(metadata: Record<string, string | null> | undefined): string {
  return metadata?.filename ?? metadata?.name ?? metadata?.originalFileName ?? 'upload';
}

export function tusMount(ctx: EngineContext, vod: VodService): (app: express.Express) => void {
  mkdirSync(vod.uploadsDir, { recursive: true });
  const datastore = new FileStore({ directory: vod.uploadsDir });
  const principals = new WeakMap<IncomingMessage, Principal>();
  const principalOf = (req: Request): Principal => {
    const node = (req as unknown as { runtime?: { node?: { req?: IncomingMessage } } }).runtime?.node?.req;
    const principal = node ? principals.get(node) : undefined;
    if (!principal) throw tusError(engineError('UNAUTHENTICATED'));
    return principal;
  };
  /** The VOD an upload belongs to, in the caller's organization; thrown as a tus error otherwise. */
  const ownedSource = async (req: Request, metaguid: string | null | undefined) => {
    if (!metaguid) {
      throw tusError(engineError('VALIDATION_FAILED', `Upload-Metadata needs ${METAGUID_KEY}: the guid of POST /broker/…/vod/meta`));
    }
    try {
      return await vod.owned(metaguid, principalOf(req).organizationId);
    } catch (e) {
      throw isEngineError(e) ? tusError(e) : e;
    }
  };

  const servers = TUS_PATHS.map(({ path, mode }) => {
    const options: ConstructorParameters<typeof Server>[0] = {
      path,
      datastore,
      maxSize: TUS_UPLOAD_LIMIT,
      // Browser clients of the private path send X-Api-Key, so its preflight must allow it.
      allowedHeaders: ['X-Api-Key', 'X-Request-Id'],
      exposedHeaders: ['X-Request-Id'],
      generateUrl: (_req, { path: p, id }) => `${ctx.config.publicUrl}${p}/${id}`,
      namingFunction: (_req, metadata) => storedFileName(originalName(metadata), ctx.clock.nowMs()),
      onUploadCreate: async (req, upload) => {
        // Upload-Metadata is decoded text that reaches the store (the original file name): the same text rule as bodies.
        const badText = findBadText(upload.metadata ?? {}).map((p) => ({ field: `Upload-Metadata.${p.field}`, message: p.message }));
        if (badText.length) {
          throw tusError(engineError('VALIDATION_FAILED', `invalid Upload-Metadata: ${badText.map((p) => `${p.field}: ${p.message}`).join('; ')}`, { fields: badText }));
        }
        const source = await ownedSource(req, upload.metadata?.[METAGUID_KEY]);
        try {
          vod.assertNotBusy(source);
        } catch (e) {
          throw isEngineError(e) ? tusError(e) : e;
        }
        return {};
      },
      onIncomingRequest: async (req, uploadId) => {
        if (req.method === 'POST' || req.method === 'OPTIONS' || !uploadId) return;
        // HEAD/PATCH/DELETE of an existing upload: only its VOD's organization may touch it.
        const upload = await datastore.getUpload(uploadId).catch(() => undefined);
        if (upload) await ownedSource(req, upload.metadata?.[METAGUID_KEY]);
      },
      // a full disk mid-PATCH (or at creation): 507 with a code and description, and the VOD says why; the part already
      // written stays (tus resumes it once there is space), never marked uploaded
      onResponseError: async (req, err) => {
        if (!isDiskFull(err)) return undefined;
        const id = new URL(req.url).pathname.slice(path.length + 1);
        const upload = id ? await datastore.getUpload(id).catch(() => undefined) : undefined;
        // a creation (POST) has no upload yet: its VOD is named in the request's Upload-Metadata
        const guid = upload?.metadata?.[METAGUID_KEY] ?? metaguidOf(req.headers.get('upload-metadata'));
        const error = guid ? await vod.uploadFailedOnFullDisk(guid, err) : engineError('INSUFFICIENT_STORAGE', 'the upload could not be written: the disk of the data directory is full (ENOSPC); free space, then try again');
        return tusError(error);
      },
      onUploadFinish: async (_req, upload) => {
        const guid = upload.metadata?.[METAGUID_KEY];
        if (guid) {
          try {
            await vod.uploaded(guid, upload.id, originalName(upload.metadata));
          } catch (e) {
            ctx.logger.error({ err: e, guid, upload: upload.id }, 'a finished tus upload could not be queued');
            throw isEngineError(e) ? tusError(e) : e;
          }
        }
        return {};
      },
    };
    return { path, mode, server: new Server(options) };
  });

  return (app) => {
    app.use(async (req: express.Request, res: express.Response, next: express.NextFunction) => {
      const entry = servers.find((s) => req.path === s.path || req.path.startsWith(`${s.path}/`));
      if (!entry) return next();
      res.locals.routePath = `${entry.path}/*`;
      try {
        // Discovery (Tus-Version, Tus-Extension, Tus-Max-Size) and browser preflights carry no credentials (tus 1.0 OPTIONS).
        if (req.method === 'OPTIONS') return void (await entry.server.handle(req, res as unknown as ServerResponse));
        const principal = await resolvePrincipal(ctx, req.headers, entry.mode);
        if (!principal?.permissions.includes('write')) throw engineError('FORBIDDEN', 'uploading needs the write permission');
        principals.set(req, principal);
        await entry.server.handle(req, res as unknown as ServerResponse);
      } catch (e) {
        if (isEngineError(e)) return sendError(res, e);
        next(e);
      }
    });
  };
}
