// GET /live/<workflowId>/…: the channels' HLS on the engine's own origin (the "CDN distribution" of spec 1).
// Playlists change every segment (no caching); segment names never repeat (immutable).
import path from 'node:path';
import express from 'express';
import { CONTENT_TYPES, SEGMENT_CACHE } from '../../kernel/http/media-types.js';
import { engineError } from '../../kernel/core/errors.js';
import { sendError } from '../../kernel/http/send-error.js';

export function liveMount(liveRoot: string): (app: express.Express) => void {
  const files = express.static(path.resolve(liveRoot), {
    dotfiles: 'ignore', index: false, fallthrough: true, etag: true, lastModified: false,
    setHeaders: (res, file) => {
      const ext = path.extname(file).toLowerCase();
      const type = CONTENT_TYPES[ext];
      if (type) res.setHeader('Content-Type', type);
      res.setHeader('Cache-Control', ext === '.m3u8' ? 'no-cache' : SEGMENT_CACHE);
    },
  });
  return (app) => {
    app.use('/live', (req, res, next) => {
      res.locals.routePath = '/live/*';
      if (req.method !== 'GET' && req.method !== 'HEAD') return next();
      // ffmpeg's half-written files (temp_file flag) are never served
      const missing = () => sendError(res, engineError('NOT_FOUND', `no live file ${req.path}`));
      if (req.path.endsWith('.tmp')) return missing();
      files(req, res, missing);
    });
  };
}
