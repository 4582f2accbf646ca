// GET/HEAD /media/* from DATA_DIR/media: the engine's own media store behind every cdnUrl. Content types of HLS, DASH,
// CMAF, MP4, WebVTT and JPEG; single HTTP ranges (206, 416 beyond the end); strong ETag + If-None-Match; CORS (app);
// long immutable caching for segments (each encode writes a new versioned directory) and short for manifests.
import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type express from 'express';
import { engineError, isEngineError } from '../../kernel/core/errors.js';
import { sendError } from '../../kernel/http/send-error.js';
import { CONTENT_TYPES, MANIFEST_CACHE, MANIFESTS, SEGMENT_CACHE } from '../../kernel/http/media-types.js';


/** Parses one `bytes=` range against a size; null: ignore the header; 'unsatisfiable': 416. */
export function parseRange(header: string, size: number): { start: number; end: number } | null | 'unsatisfiable' {
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m) return null; // multiple or malformed ranges: the whole file (RFC 9110 allows ignoring Range)
  const [, a = '', b = ''] = m;
  if (a === '' && b === '') return null;
  if (a === '') {
    const suffix = Number(b);
    if (suffix === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(a);
  const end = b === '' ? size - 1 : Math.min(Number(b), size - 1);
  if (start >= size || end < start) return 'unsatisfiable';
  return { start, end };
}

export function mediaMount(mediaDir: string): (app: express.Express) => void {
  const root = path.resolve(mediaDir);
  return (app) => {
    app.use('/media', async (req: express.Request, res: express.Response, next: express.NextFunction) => {
      res.locals.routePath = '/media/*';
      if (req.method !== 'GET' && req.method !== 'HEAD') return next();
      let handle: FileHandle | undefined;
      try {
        let rel: string;
        try {
          rel = decodeURIComponent(req.path);
        } catch {
          throw engineError('VALIDATION_FAILED', 'the media path is not valid percent-encoding');
        }
        const file = path.resolve(root, `.${rel}`);
        const segments = rel.split(/[\\/]/);
        if (rel.includes('\0') || segments.includes('..') || !file.startsWith(`${root}${path.sep}`)
          || segments.some((s) => s.endsWith('.partial'))) {
          throw engineError('FORBIDDEN', 'the path leaves the media store');
        }
        // Opened before it is read: a re-encode removes the older version's files right after its record moves on,
        // and a file removed between a stat and an open would fail after the headers went (a reset connection).
        // An open file stays readable after its removal, so a reply either is whole or is a 404.
        handle = await open(file, 'r').catch(() => undefined);
        const info = await handle?.stat().catch(() => undefined);
        if (!handle || !info?.isFile()) throw engineError('NOT_FOUND', `no media file ${rel}`);
        const ext = path.extname(file).toLowerCase();
        const etag = `"${info.size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}"`;
        res.setHeader('Content-Type', CONTENT_TYPES[ext] ?? 'application/octet-stream');
        res.setHeader('Cache-Control', MANIFESTS.has(ext) ? MANIFEST_CACHE : SEGMENT_CACHE);
        res.setHeader('ETag', etag);
        res.setHeader('Last-Modified', info.mtime.toUTCString());
        res.setHeader('Accept-Ranges', 'bytes');
        const inm = req.headers['if-none-match'];
        if (inm && inm.split(',').map((t) => t.trim().replace(/^W\//, '')).some((t) => t === etag || t === '*')) {
          res.status(304).end();
          return;
        }
        let start = 0;
        let end = info.size - 1;
        const rangeHeader = req.headers.range;
        const ifRange = req.headers['if-range'];
        if (rangeHeader && (!ifRange || ifRange === etag)) {
          const range = parseRange(rangeHeader, info.size);
          if (range === 'unsatisfiable') {
            res.setHeader('Content-Range', `bytes */${info.size}`);
            throw engineError('RANGE_NOT_SATISFIABLE', `the range ${rangeHeader} is beyond the end of the file (${info.size} bytes)`);
          }
          if (range) {
            ({ start, end } = range);
            res.status(206);
            res.setHeader('Content-Range', `bytes ${start}-${end}/${info.size}`);
          }
        }
        const length = info.size === 0 ? 0 : end - start + 1;
        res.setHeader('Content-Length', String(length));
        if (req.method === 'HEAD' || length === 0) {
          res.end();
          return;
        }
        const stream = handle.createReadStream({ start, end, autoClose: true });
        handle = undefined; // the stream closes it now
        stream.on('error', (e) => res.destroy(e));
        res.on('close', () => stream.destroy());
        stream.pipe(res);
      } catch (e) {
        if (isEngineError(e)) {
          // Content-Type of the error is JSON, not the media type set above.
          res.removeHeader('Cache-Control');
          res.removeHeader('ETag');
          return sendError(res, e);
        }
        next(e);
      } finally {
        // (a HEAD, a 304 or an error: nothing streams from it)
        await handle?.close().catch(() => undefined);
      }
    });
  };
}
