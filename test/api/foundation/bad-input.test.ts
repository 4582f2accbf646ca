import { SignJWT, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';

/** Every bad request gets its 4xx with a code, never a 500, and changes nothing stored. */
describe('bad input on the foundation routes', () => {
  let engine: TestEngine;
  let idToken: string;
  let keyValue: string;
  let otherOrgId: string;
  let metaGroupGuid: string;

  beforeAll(async () => {
    engine = await startTestEngine();
    const tokens = await engine.login();
    idToken = tokens.IdToken;
    const created = await engine.api('POST', '/broker/api-keys', { headers: { Authorization: idToken }, body: { name: 'k', active: true } });
    const guid = created.body.url.split('/').pop();
    keyValue = (await engine.api('GET', `/broker/api-keys/${guid}`, { headers: { Authorization: idToken } })).body.data.value;
    otherOrgId = '00000000-0000-4000-8000-000000000000';
    const attachments = await engine.api('GET', `/organizations/${engine.defaultOrganizationId}/meta-group-attachments`, { headers: { Authorization: idToken } });
    const group = await engine.api('POST', `/organizations/${engine.defaultOrganizationId}/meta-groups`, {
      headers: { Authorization: idToken },
      body: { attachment: attachments.body.data[0].guid, name: 'Film', fields: [{ name: 'rating', type: 'number', required: true }] },
    });
    metaGroupGuid = group.body.guid;
  });
  afterAll(async () => engine?.close());

  async function snapshot(): Promise<string> {
    const db = engine.ctx.store.db;
    const tables = ['users', 'api_keys', 'meta_groups', 'image_metas', 'refresh_tokens'] as const;
    const parts = await Promise.all(tables.map((t) => db.selectFrom(t).selectAll().execute()));
    return JSON.stringify(parts);
  }

  const tamper = (token: string) => {
    const [head, payload, signature] = token.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    claims.organization = '00000000-0000-4000-8000-000000000000';
    return `${head}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
  };
  const algNone = (token: string) => {
    const payload = token.split('.')[1];
    return `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`;
  };

  const cases: Array<{ name: string; request: () => Promise<{ status: number; body: any }>; status: number; code: string }> = [
    { name: 'authorize without password', request: () => engine.api('POST', '/auth/authorize', { body: { email: 'a@b.c' } }), status: 400, code: 'VALIDATION_FAILED' },
    { name: 'authorize with a number as email', request: () => engine.api('POST', '/auth/authorize', { body: { email: 5, password: 'x' } }), status: 400, code: 'VALIDATION_FAILED' },
    { name: 'malformed JSON', request: () => engine.api('POST', '/auth/authorize', { raw: '{"email": ' }), status: 400, code: 'MALFORMED_JSON' },
    { name: 'a body over 1 MiB', request: () => engine.api('POST', '/images/meta', { headers: { Authorization: idToken }, raw: JSON.stringify({ meta: { a: 'x'.repeat(1_100_000) } }) }), status: 413, code: 'PAYLOAD_TOO_LARGE' },
    { name: 'an unknown route', request: () => engine.api('GET', '/no/such/route'), status: 404, code: 'ROUTE_NOT_FOUND' },
    { name: 'an unknown API key guid', request: () => engine.api('GET', '/broker/api-keys/unknown', { headers: { Authorization: idToken } }), status: 404, code: 'NOT_FOUND' },
    { name: 'a tampered JWT', request: () => engine.api('GET', '/api-keys', { headers: { Authorization: tamper(idToken) } }), status: 401, code: 'INVALID_TOKEN' },
    { name: 'a JWT with alg none', request: () => engine.api('GET', '/api-keys', { headers: { Authorization: algNone(idToken) } }), status: 401, code: 'INVALID_TOKEN' },
    { name: 'a JWT signed by another key', request: async () => engine.api('GET', '/api-keys', { headers: { Authorization: await foreignToken() } }), status: 401, code: 'INVALID_TOKEN' },
    { name: 'no credentials on a live path', request: () => engine.api('GET', '/api-keys'), status: 401, code: 'UNAUTHENTICATED' },
    { name: 'an unknown API key', request: () => engine.api('POST', '/images/private/meta', { headers: { 'X-Api-Key': 'mpe_nope' }, body: { meta: { a: 'b' } } }), status: 401, code: 'INVALID_API_KEY' },
    { name: 'a private path with an ID token', request: () => engine.api('POST', '/images/private/meta', { headers: { Authorization: idToken }, body: { meta: { a: 'b' } } }), status: 401, code: 'WRONG_AUTH_SCHEME' },
    { name: 'a public broker path with only a key', request: () => engine.api('POST', '/images/meta', { headers: { 'X-Api-Key': keyValue }, body: { meta: { a: 'b' } } }), status: 401, code: 'WRONG_AUTH_SCHEME' },
    { name: 'image meta without pairs', request: () => engine.api('POST', '/images/meta', { headers: { Authorization: idToken }, body: { meta: {} } }), status: 400, code: 'VALIDATION_FAILED' },
    { name: 'image meta with a number value', request: () => engine.api('POST', '/images/meta', { headers: { Authorization: idToken }, body: { meta: { a: 1 } } }), status: 400, code: 'VALIDATION_FAILED' },
    { name: "another organization's users", request: () => engine.api('GET', `/organizations/${otherOrgId}/users`, { headers: { Authorization: idToken } }), status: 404, code: 'NOT_FOUND' },
    { name: "another organization's meta group", request: () => engine.api('GET', `/organizations/${otherOrgId}/meta-groups/${metaGroupGuid}`, { headers: { Authorization: idToken } }), status: 404, code: 'NOT_FOUND' },
    { name: 'a meta group with min above max', request: () => engine.api('POST', `/organizations/${engine.defaultOrganizationId}/meta-groups`, { headers: { Authorization: idToken }, body: { attachment: '6f1d3a52-7c1e-4b8e-9a41-0c7e2d1b5a01', name: 'x', fields: [{ name: 'a', type: 'string', min: 5, max: 2 }] } }), status: 400, code: 'VALIDATION_FAILED' },
    { name: 'a meta group enum without options', request: () => engine.api('POST', `/organizations/${engine.defaultOrganizationId}/meta-groups`, { headers: { Authorization: idToken }, body: { attachment: '6f1d3a52-7c1e-4b8e-9a41-0c7e2d1b5a01', name: 'x', fields: [{ name: 'a', type: 'enum' }] } }), status: 400, code: 'VALIDATION_FAILED' },
    { name: 'a meta group with a reserved field name', request: () => engine.api('POST', `/organizations/${engine.defaultOrganizationId}/meta-groups`, { headers: { Authorization: idToken }, body: { attachment: '6f1d3a52-7c1e-4b8e-9a41-0c7e2d1b5a01', name: 'x', fields: [{ name: 'title', type: 'string' }] } }), status: 400, code: 'VALIDATION_FAILED' },
    { name: 'a meta group with a field name used twice', request: () => engine.api('POST', `/organizations/${engine.defaultOrganizationId}/meta-groups`, { headers: { Authorization: idToken }, body: { attachment: '6f1d3a52-7c1e-4b8e-9a41-0c7e2d1b5a01', name: 'x', fields: [{ name: 'a', type: 'string' }, { name: 'a', type: 'number' }] } }), status: 400, code: 'VALIDATION_FAILED' },
    { name: 'a meta group with an unknown attachment', request: () => engine.api('POST', `/organizations/${engine.defaultOrganizationId}/meta-groups`, { headers: { Authorization: idToken }, body: { attachment: 'nope', name: 'x', fields: [] } }), status: 400, code: 'VALIDATION_FAILED' },
    { name: 'a broker key without active', request: () => engine.api('POST', '/broker/api-keys', { headers: { Authorization: idToken }, body: { name: 'x' } }), status: 400, code: 'VALIDATION_FAILED' },
  ];

  async function foreignToken(): Promise<string> {
    const { privateKey: key } = await generateKeyPair('ES256');
    return new SignJWT({ token_use: 'id', organization: engine.defaultOrganizationId, permissions: ['read', 'write', 'admin'] })
      .setProtectedHeader({ alg: 'ES256' })
      .setIssuer('media-pipeline-engine')
      .setSubject('x')
      .setExpirationTime('1h')
      .sign(key);
  }

  it.each(cases.map((c) => [c.name, c] as const))('answers %s with its 4xx and code, changing nothing', async (_name, testCase) => {
    const before = await snapshot();
    const answer = await testCase.request();
    expect(answer.status).toBe(testCase.status);
    expect(answer.body).toMatchObject({ status: false, code: testCase.code });
    expect(typeof answer.body.description).toBe('string');
    expect(await snapshot()).toBe(before);
  });

  it('says what was wrong with the credentials sent: none at all, or the other kind', async () => {
    for (const [method, path] of [['POST', '/images/private/meta'], ['GET', '/broker/private/channels']] as const) {
      const body = method === 'POST' ? { meta: { a: 'b' } } : undefined;
      const none = await engine.api(method, path, { body });
      expect(none.status).toBe(401);
      expect(none.body).toMatchObject({ code: 'UNAUTHENTICATED', description: expect.stringContaining('no credentials were sent') });
      expect(none.body.description).not.toMatch(/ID token/);
      const token = await engine.api(method, path, { body, headers: { Authorization: idToken } });
      expect(token.body).toMatchObject({ code: 'WRONG_AUTH_SCHEME', description: expect.stringContaining('not an ID token') });
    }
    const body = { meta: { a: 'b' } };
    const none = await engine.api('POST', '/images/meta', { body });
    expect(none.body).toMatchObject({ code: 'UNAUTHENTICATED', description: expect.stringContaining('no credentials were sent') });
    const either = await engine.api('GET', '/api-keys');
    expect(either.body).toMatchObject({ code: 'UNAUTHENTICATED', description: expect.stringContaining('no credentials were sent') });
    const key = await engine.api('POST', '/images/meta', { body, headers: { 'X-Api-Key': keyValue } });
    expect(key.body).toMatchObject({ code: 'WRONG_AUTH_SCHEME', description: expect.stringContaining('API keys go to') });
  });

  it('names every bad field in a validation error', async () => {
    const answer = await engine.api('POST', '/broker/api-keys', { headers: { Authorization: idToken }, body: { name: 7, active: 'yes' } });
    expect(answer.status).toBe(400);
    expect(answer.body.fields.map((f: { field: string }) => f.field).sort()).toEqual(['active', 'name']);
    expect(answer.body.description).toMatch(/name/);
  });

  it('sends CORS headers on every response, errors included', async () => {
    const response = await fetch(`${engine.url}/no/such/route`);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    const preflight = await fetch(`${engine.url}/auth/authorize`, { method: 'OPTIONS' });
    expect(preflight.status).toBe(204);
  });
});
