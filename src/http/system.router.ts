import { createRequire } from 'node:module';
import express from 'express';
import type { EngineContext } from '../../kernel/context.js';
import type { RouteSpec } from '../../kernel/http/route.js';
import { buildOpenApi } from './openapi.js';
import { serveMetrics } from './metrics-endpoint.js';

const require = createRequire(import.meta.url);

const DOCS_PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>Engine API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body><div id="ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script></body></html>`;

/** What `GET /` tells a program that asks for JSON: where the API, its description and the console are. */
export const API_INDEX = {
  name: 'Media pipeline engine',
  console: '/console/',
  openapi: '/openapi.json',
  docs: '/docs',
  healthz: '/healthz',
  readyz: '/readyz',
  metrics: '/metrics',
  playback: '/v1/',
} as const;

/** Health, readiness, metrics, the OpenAPI document and the docs page (swagger-ui from node_modules, no CDN). */
export function systemMount(ctx: EngineContext, routes: () => RouteSpec[]) {
  return (app: express.Express): void => {
    // A person at the root wants the console; a program that asks for JSON gets the index of the API.
    app.get('/', (req, res) => {
      res.locals.routePath = '/';
      res.setHeader('Vary', 'Accept');
      // the console is served by the api role only; with a metrics listener of its own, /metrics is not on this port
      const hasConsole = ctx.config.roles.includes('api');
      if (!hasConsole || req.accepts(['html', 'json']) === 'json') {
        const { metrics, console: consolePath, ...rest } = API_INDEX;
        res.json({ ...rest, ...(hasConsole ? { console: consolePath } : {}), ...(ctx.config.metricsPort === undefined ? { metrics } : {}) });
        return;
      }
      res.redirect(302, '/console/');
    });
    app.get('/healthz', (_req, res) => {
      res.locals.routePath = '/healthz';
      res.json({ status: 'ok' });
    });
    // The api cannot answer without the database: not ready, so a balancer drains it (issue 27). The other roles keep
    // working through an outage (the proxy serves from its caches; workers wait), so they stay ready and say why.
    const needsDatabase = ctx.config.roles.includes('api');
    app.get('/readyz', async (_req, res) => {
      res.locals.routePath = '/readyz';
      const database = await ctx.store.ping();
      const ready = database || !needsDatabase;
      res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not-ready', database: database ? 'ok' : 'unreachable' });
    });
    if (ctx.config.metricsPort === undefined) {
      const metrics = serveMetrics(ctx);
      app.get('/metrics', async (req, res) => {
        res.locals.routePath = '/metrics';
        await metrics(req, res);
      });
    }
    let document: Record<string, unknown> | undefined;
    app.get('/openapi.json', (_req, res) => {
      res.locals.routePath = '/openapi.json';
      document ??= buildOpenApi(routes(), ctx.config.publicUrl, { metricsToken: ctx.config.metricsToken !== undefined });
      res.json(document);
    });
    const swaggerDir = (require('swagger-ui-dist') as { getAbsoluteFSPath(): string }).getAbsoluteFSPath();
    app.use('/docs/assets', express.static(swaggerDir, { index: false, maxAge: '1d' }));
    app.get('/docs/init.js', (_req, res) => {
      res.type('application/javascript').send("window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#ui' });");
    });
    app.get(['/docs', '/docs/'], (_req, res) => {
      res.locals.routePath = '/docs';
      res.type('html').send(DOCS_PAGE);
    });
  };
}
