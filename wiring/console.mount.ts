// The operator console (issue 17) at /console: the Vite build of console/ (npm run build:console, run by
// scripts/setup.sh) served from console/dist. Hashed assets are cached for a year; index.html is revalidated so a
// new build is picked up at once. The page needs no inline script or style, so its CSP allows none.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express from 'express';
import type { EngineContext } from '../kernel/context.js';
import { engineError } from '../kernel/core/errors.js';
import type { EnginePart } from '../kernel/part.js';
import { sendError } from '../kernel/http/send-error.js';

export const CONSOLE_DIST = fileURLToPath(new URL('../console/dist', import.meta.url));

/**
 * No inline script or style, scripts only from this origin. The preview players fetch media from wherever a stream
 * lives (an SSAI stream's content segments stay on their origin, a channel's output may be on a CDN), so connect
 * and media take any http(s) origin; media blob: is hls.js's MediaSource and media data: the empty WebVTT <track> it
 * adds per subtitle rendition (hls.js utils/texttrack-utils.ts); img data: for uPlot's legend markers.
 */
export const CONSOLE_CSP = [
  "default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self' data: blob: http: https:", "media-src 'self' blob: data: http: https:",
  "connect-src 'self' http: https:", "worker-src 'self'", "object-src 'none'", "base-uri 'self'", "form-action 'self'", "frame-ancestors 'none'",
].join('; ');

const YEAR = 'public, max-age=31536000, immutable';

export function consoleMount(ctx: EngineContext, distDir: string = CONSOLE_DIST): (app: express.Express) => void {
  const index = path.join(distDir, 'index.html');
  if (!existsSync(index)) {
    ctx.logger.warn({ distDir }, 'the console is not built: /console answers 503 until `npm run build:console` runs');
  }
  return (app) => {
    app.use('/console', (req, res, next) => {
      res.locals.routePath = '/console/*';
      res.setHeader('Content-Security-Policy', CONSOLE_CSP);
      res.setHeader('X-Content-Type-Options', 'nosniff');
      if (req.method !== 'GET' && req.method !== 'HEAD') return next();
      // /console without the slash: the page's relative asset paths need the folder form.
      if (req.originalUrl === '/console' || req.originalUrl.startsWith('/console?')) return res.redirect(301, `/console/${req.originalUrl.slice(8)}`);
      if (!existsSync(index)) return sendError(res, engineError('CONSOLE_NOT_BUILT', `no ${index}: run npm run build:console`));
      next();
    });
    app.use('/console/assets', express.static(path.join(distDir, 'assets'), {
      index: false, fallthrough: true, setHeaders: (res) => res.setHeader('Cache-Control', YEAR),
    }));
    app.use('/console', express.static(distDir, {
      index: 'index.html', fallthrough: true, redirect: false,
      setHeaders: (res, file) => res.setHeader('Cache-Control', file === index ? 'no-cache' : 'public, max-age=300'),
    }));
  };
}

export const consolePart: EnginePart = {
  name: 'console',
  roles: ['api'],
  mounts: (ctx) => [consoleMount(ctx)],
};
