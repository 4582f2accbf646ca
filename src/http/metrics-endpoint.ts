// /metrics (issue 26 §5): its labels name workflows and its body is large, so it can be closed to the public: a bearer
// token (METRICS_TOKEN) and/or a listener of its own (METRICS_PORT) that a firewall keeps internal.
import { createHash, timingSafeEqual } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EngineContext } from '../../kernel/context.js';
import { engineError, errorBody, type EngineError } from '../../kernel/core/errors.js';

/** true when no token is asked for, or the Authorization header carries it (compared in constant time). */
export function metricsAuthorized(authorization: string | undefined, token: string | undefined): boolean {
  if (token === undefined) return true;
  const given = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
  if (!given) return false;
  // hashes of equal length, so neither the length nor the content leaks through the time taken
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(given), digest(token));
}

function sendJsonError(res: ServerResponse, error: EngineError, headers: Record<string, string> = {}): void {
  res.writeHead(error.status, { 'content-type': 'application/json; charset=utf-8', ...headers }).end(JSON.stringify(errorBody(error)));
}

/** Answers GET/HEAD /metrics: the registry's text, behind the token when one is set. */
export function serveMetrics(ctx: EngineContext): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    if (!metricsAuthorized(req.headers.authorization, ctx.config.metricsToken)) {
      const why = req.headers.authorization ? 'the bearer token is not the METRICS_TOKEN' : '/metrics takes the METRICS_TOKEN as Authorization: Bearer <token>';
      sendJsonError(res, engineError('UNAUTHENTICATED', why), { 'www-authenticate': 'Bearer realm="metrics"' });
      return;
    }
    const body = await ctx.metrics.registry.metrics();
    res.writeHead(200, { 'content-type': ctx.metrics.registry.contentType });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
}

/** The METRICS_PORT listener: /metrics only. Resolves with its base URL once it listens. */
export async function startMetricsListener(ctx: EngineContext, port: number): Promise<{ url: string; close(): Promise<void> }> {
  const metrics = serveMetrics(ctx);
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') return sendJsonError(res, engineError('ROUTE_NOT_FOUND', `this listener serves only /metrics, not ${path}`));
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendJsonError(res, engineError('ROUTE_NOT_FOUND', `no route for ${req.method} /metrics`));
    metrics(req, res).catch((error: unknown) => {
      ctx.logger.error({ err: error }, 'the metrics could not be rendered');
      if (!res.headersSent) sendJsonError(res, engineError('INTERNAL', 'the metrics could not be rendered'));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host: ctx.config.host }, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  const host = ctx.config.host === '0.0.0.0' || ctx.config.host === '::' ? '127.0.0.1' : ctx.config.host;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
