import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, ConfigError } from '../../../kernel/core/config.js';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';

describe('health, metrics, OpenAPI and configuration', () => {
  let engine: TestEngine;
  beforeAll(async () => {
    engine = await startTestEngine();
  });
  afterAll(async () => engine?.close());

  it('sends a browser at / to the console and a JSON caller to the index of the API', async () => {
    for (const accept of ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', '*/*', '']) {
      const page = await fetch(`${engine.url}/`, { redirect: 'manual', headers: accept ? { Accept: accept } : {} });
      expect(page.status).toBe(302);
      expect(page.headers.get('location')).toBe('/console/');
    }
    const index = await engine.api('GET', '/', { headers: { Accept: 'application/json' } });
    expect(index.status).toBe(200);
    expect(index.body).toMatchObject({ console: '/console/', openapi: '/openapi.json', docs: '/docs', healthz: '/healthz', readyz: '/readyz', metrics: '/metrics', playback: '/v1/' });
    // every address the index names answers on this engine
    for (const address of ['/openapi.json', '/docs', '/healthz', '/readyz', '/metrics']) {
      expect((await fetch(`${engine.url}${address}`)).status, address).toBe(200);
    }
  });

  it('answers the index, not a redirect to a console it lacks, on an instance without the api role', async () => {
    const ssaiOnly = await startTestEngine({ roles: 'ssai' });
    try {
      const root = await fetch(`${ssaiOnly.url}/`, { redirect: 'manual', headers: { Accept: 'text/html' } });
      expect(root.status).toBe(200);
      const index = await root.json();
      expect(index).toMatchObject({ playback: '/v1/', healthz: '/healthz' });
      expect(index.console).toBeUndefined();
    } finally {
      await ssaiOnly.close();
    }
  });

  it('answers /healthz and /readyz with the database reachable', async () => {
    expect((await engine.api('GET', '/healthz')).body).toEqual({ status: 'ok' });
    expect((await engine.api('GET', '/readyz')).body).toEqual({ status: 'ready', database: 'ok' });
  });

  it('counts requests by route and status in /metrics', async () => {
    await engine.api('GET', '/healthz');
    const text = (await engine.api('GET', '/metrics')).body as string;
    expect(text).toMatch(/engine_http_requests_total\{method="GET",route="\/healthz",status="200"\} \d+/);
    expect(text).toContain('engine_http_request_duration_seconds_bucket');
  });

  it('serves an OpenAPI 3.1 document built from the route schemas and a local docs page', async () => {
    const doc = (await engine.api('GET', '/openapi.json')).body;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.paths['/auth/authorize'].post.requestBody.content['application/json'].schema.required).toEqual(['email', 'password']);
    expect(doc.paths['/broker/api-keys/{guid}'].get).toBeDefined();
    // the paths served outside the JSON routes are described too
    for (const [path, method] of [
      ['/v1/master/{guid}/{path}', 'get'], ['/v1/session/{guid}/{path}', 'post'], ['/v1/manifest/{guid}/{sessionId}/{n}.m3u8', 'get'],
      ['/v1/segment/{guid}/{sessionId}/{availId}/{adIndex}/{n}/{segment}', 'get'], ['/v1/tracking/{guid}/{sessionId}', 'get'],
      ['/live/{workflowId}/{file}', 'get'], ['/linear/{channelGuid}/{token}/{playlist}.m3u8', 'get'], ['/media/{path}', 'get'],
      ['/broker/upload', 'post'], ['/broker/upload/{uploadId}', 'patch'], ['/broker/private/upload', 'post'],
      ['/healthz', 'get'], ['/readyz', 'get'], ['/metrics', 'get'],
    ] as const) {
      expect(doc.paths[path]?.[method], `${method} ${path}`).toMatchObject({ summary: expect.any(String), responses: expect.any(Object) });
    }
    const operationIds = Object.values(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap((ops) => Object.values(ops).map((o) => o.operationId));
    expect(new Set(operationIds).size).toBe(operationIds.length);
    const page = await fetch(`${engine.url}/docs`);
    expect(await page.text()).toContain('/docs/assets/swagger-ui-bundle.js');
    const asset = await fetch(`${engine.url}/docs/assets/swagger-ui-bundle.js`);
    expect(asset.status).toBe(200);
  });

  it('names the bad variable in a configuration error', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrowError(ConfigError);
    expect(() => loadConfig({ PORT: 'eighty' })).toThrowError(/PORT/);
    expect(() => loadConfig({ DATABASE_URL: 'mysql://x' })).toThrowError(/DATABASE_URL/);
    expect(() => loadConfig({ ENGINE_ROLES: 'api,nope' })).toThrowError(/ENGINE_ROLES/);
    expect(loadConfig({ PORT: '9000' }).publicUrl).toBe('http://localhost:9000');
    expect(loadConfig({ ENGINE_ADMIN_EMAIL: 'admin@localhost' }).adminEmail).toBe('admin@localhost');
    expect(() => loadConfig({ ENGINE_ADMIN_EMAIL: 'not an email' })).toThrowError(/ENGINE_ADMIN_EMAIL/);
  });

  it('keeps data across a restart on the same data directory', async () => {
    const first = await startTestEngine();
    const tokens = await first.login();
    const created = await first.api('POST', '/images/meta', { headers: { Authorization: tokens.IdToken }, body: { meta: { k: 'v' } } });
    await first.close();
    const second = await startTestEngine({ dataDir: first.dataDir });
    // Tokens survive: the signing key is kept in the store.
    const read = await second.api('GET', `/images/meta/${created.body.guid}`, { headers: { Authorization: tokens.IdToken } });
    expect(read.body.data.meta).toEqual({ k: 'v' });
    await second.close();
  });
});

describe('/metrics closed to the public', () => {
  const TOKEN = 'metrics-token-0123456789';

  it('asks for the METRICS_TOKEN as a bearer token when it is set', async () => {
    const engine = await startTestEngine({ env: { METRICS_TOKEN: TOKEN } });
    try {
      const none = await fetch(`${engine.url}/metrics`);
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(await none.json()).toMatchObject({ status: false, code: 'UNAUTHENTICATED', description: expect.stringContaining('Bearer') });
      const wrong = await fetch(`${engine.url}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}x` } });
      expect(wrong.status).toBe(401);
      expect((await wrong.json()).description).toContain('not the METRICS_TOKEN');
      const right = await fetch(`${engine.url}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } });
      expect(right.status).toBe(200);
      expect(await right.text()).toContain('engine_http_requests_total');
      const doc = (await engine.api('GET', '/openapi.json')).body;
      expect(doc.paths['/metrics'].get.security).toEqual([{ metricsToken: [] }]);
      // the rest of the open paths stay open
      expect((await fetch(`${engine.url}/healthz`)).status).toBe(200);
    } finally {
      await engine.close();
    }
  });

  it('serves /metrics only on the METRICS_PORT listener when that is set, behind the token too', async () => {
    const engine = await startTestEngine({ env: { METRICS_PORT: '0', METRICS_TOKEN: TOKEN } });
    try {
      expect(engine.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(engine.metricsUrl).not.toBe(engine.url);
      expect((await fetch(`${engine.url}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
      expect((await fetch(`${engine.metricsUrl}/metrics`)).status).toBe(401);
      const right = await fetch(`${engine.metricsUrl}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } });
      expect(right.status).toBe(200);
      expect(right.headers.get('content-type')).toContain('text/plain');
      expect(await right.text()).toContain('engine_http_requests_total');
      // nothing else is served there
      expect((await fetch(`${engine.metricsUrl}/healthz`)).status).toBe(404);
      expect((await engine.api('GET', '/', { headers: { Accept: 'application/json' } })).body.metrics).toBeUndefined();
    } finally {
      await engine.close();
    }
  });

  it('refuses a short METRICS_TOKEN and a bad METRICS_PORT, naming the variable', () => {
    expect(() => loadConfig({ METRICS_TOKEN: 'short' })).toThrowError(/METRICS_TOKEN/);
    expect(() => loadConfig({ METRICS_PORT: '70000' })).toThrowError(/METRICS_PORT/);
    expect(loadConfig({}).metricsPort).toBeUndefined();
  });
});
