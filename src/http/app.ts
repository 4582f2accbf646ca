import { randomUUID } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { EngineContext } from '../../kernel/context.js';
import { engineError, isEngineError } from '../../kernel/core/errors.js';
import { diskFullReason, isDiskFull } from '../../kernel/core/disk-full.js';
import { hasPermission } from '../../kernel/http/principal.js';
import { resolvePrincipal } from '../auth/authenticate.js';
import { authModeForPath, type RouteSpec } from '../../kernel/http/route.js';
import { parsePart } from './validation.js';
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from '../../kernel/store/outage.js';
import { securityHeaders } from './security-headers.js';
import { sendError } from '../../kernel/http/send-error.js';

export const BODY_LIMIT = '1mb';

/** Every response carries CORS headers; preflights are answered by answerPreflight once the raw mounts passed. */
function cors(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type, X-Api-Key, X-Request-Id, Range, Tus-Resumable, Upload-Length, Upload-Metadata, Upload-Offset, Upload-Defer-Length, Upload-Concat');
  res.setHeader('Access-Control-Allow-Methods', 'GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS');
  res.setHeader('Access-Control-Expose-Headers', 'Content-Length, Content-Range, ETag, Location, Retry-After, X-Request-Id, Upload-Offset, Upload-Length, Tus-Resumable');
  next();
}

/** Preflights of JSON routes; a raw mount that speaks a protocol of its own (tus discovery) answers its OPTIONS first. */
function answerPreflight(req: Request, res: Response, next: NextFunction): void {
  if (req.method === 'OPTIONS') {
    res.status(204).end();
    return;
  }
  next();
}


/** Builds the control-plane Express app from route specs plus raw mounts (media, uploads, docs). */
export function createApp(
  ctx: EngineContext,
  routes: RouteSpec[],
  rawMounts: Array<(app: express.Express) => void>,
): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'extended');

  app.use((req, res, next) => {
    const requestId = (typeof req.headers['x-request-id'] === 'string' && req.headers['x-request-id'].slice(0, 128)) || randomUUID();
    res.locals.requestId = requestId;
    res.setHeader('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const routePath = typeof res.locals.routePath === 'string' ? res.locals.routePath : 'unmatched';
      const labels = { method: req.method, route: routePath, status: String(res.statusCode) };
      ctx.metrics.httpRequests.inc(labels);
      ctx.metrics.httpDuration.observe(labels, seconds);
      ctx.logger.info(
        { requestId, method: req.method, url: req.originalUrl.split('?')[0], route: routePath, status: res.statusCode, ms: Math.round(seconds * 1000) },
        'request',
      );
    });
    next();
  });
  app.use(securityHeaders());
  app.use(cors);

  for (const mount of rawMounts) mount(app);
  app.use(answerPreflight);

  const jsonBody = express.json({ limit: BODY_LIMIT, type: ['application/json', 'application/*+json'] });
  for (const spec of routes) {
    const mode = spec.auth ?? authModeForPath(spec.path);
    const permission = spec.permission ?? (spec.method === 'get' ? 'read' : 'write');
    app[spec.method](spec.path, jsonBody, async (req: Request, res: Response, next: NextFunction) => {
      res.locals.routePath = spec.path;
      try {
        const principal = await resolvePrincipal(ctx, req.headers, mode);
        if (principal && !hasPermission(principal, permission)) {
          throw engineError('FORBIDDEN', `the ${principal.role} role lacks the ${permission} permission`);
        }
        const hasBody = spec.method !== 'get' && spec.method !== 'delete';
        const body = parsePart(spec.body, hasBody || spec.body ? (req.body ?? {}) : undefined, 'body');
        const query = parsePart(spec.query, req.query, 'query');
        const params = parsePart(spec.params, req.params, 'params');
        const answer = await spec.handler({ body, query, params, principal, req, res });
        if (answer === undefined || res.headersSent) return;
        res.status(spec.successStatus ?? 200).json(answer);
      } catch (error) {
        next(error);
      }
    });
  }

  app.use((req: Request, _res: Response, next: NextFunction) => {
    next(engineError('ROUTE_NOT_FOUND', `no route for ${req.method} ${req.path}`));
  });

  // The last word on every failure: coded errors as they are; body-parser's own errors mapped; anything
  // else logged and answered 500 without a stack trace.
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    void _next;
    if (isEngineError(error)) {
      if (error.status >= 500) ctx.logger.error({ err: error, requestId: res.locals.requestId }, 'request failed');
      sendError(res, error);
      return;
    }
    const type = typeof error === 'object' && error !== null && 'type' in error ? String((error as { type: unknown }).type) : '';
    if (type === 'entity.parse.failed') return sendError(res, engineError('MALFORMED_JSON'));
    if (type === 'entity.too.large') return sendError(res, engineError('PAYLOAD_TOO_LARGE', `the body is larger than ${BODY_LIMIT}`));
    if (type === 'encoding.unsupported' || type === 'charset.unsupported') return sendError(res, engineError('UNSUPPORTED_MEDIA'));
    // PostgreSQL restarting or unreachable (issue 27): the client retries; the balancer drains us through /readyz.
    if (isDatabaseUnavailable(error)) {
      ctx.logger.warn({ err: error, requestId: res.locals.requestId }, 'request failed: the database is unavailable');
      return sendError(res, engineError('DATABASE_UNAVAILABLE', undefined, { retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS }));
    }
    // a full disk is the operator's to fix, not a bug: said as such (issue 32)
    if (isDiskFull(error)) {
      ctx.logger.error({ err: error, requestId: res.locals.requestId }, 'request failed: the disk of the data directory is full');
      return sendError(res, engineError('INSUFFICIENT_STORAGE', diskFullReason('what this request stores')));
    }
    if (error instanceof URIError) {
      const message = 'is not valid percent-encoding';
      return sendError(res, engineError('VALIDATION_FAILED', `invalid params: the path ${message}`, { fields: [{ field: 'params', message }] }));
    }
    ctx.logger.error({ err: error, requestId: res.locals.requestId }, 'unexpected error');
    sendError(res, engineError('INTERNAL', 'internal error; the request id is in the X-Request-Id header'));
  });
  return app;
}
