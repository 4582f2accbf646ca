import { createRequire } from 'node:module';
import express from 'express';
import type { EngineContext } from '../context.js';
import type { RouteSpec } from './route.js';
import { buildOpenApi } from './openapi.js';

const require = createRequire(import.meta.url);

const DOCS_PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>Engine API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body><div id="ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script></body></html>`;

/** Health, readiness, metrics, the OpenAPI document and the docs page (swagger-ui from node_modules, no CDN). */
export function systemMount(ctx: EngineContext, routes: () => RouteSpec[]) {
  return (app: express.Express): void => {
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
    app.get('/metrics', async (_req, res) => {
      res.locals.routePath = '/metrics';
      res.setHeader('Content-Type', ctx.metrics.registry.contentType);
      res.send(await ctx.metrics.registry.metrics());
    });
    let document: Record<string, unknown> | undefined;
    app.get('/openapi.json', (_req, res) => {
      res.locals.routePath = '/openapi.json';
      document ??= buildOpenApi(routes(), ctx.config.publicUrl);
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
