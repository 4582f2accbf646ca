import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, postgresAvailable, startTestEngine, type TestEngine } from '../../helpers/engine.js';

const postgres = await postgresAvailable();

describe.each(DIALECTS)('API keys on %s', (dialect) => {
  const skip = dialect === 'postgres' && !postgres;
  let engine: TestEngine;
  let idToken: string;

  beforeAll(async () => {
    if (skip) return;
    engine = await startTestEngine({ dialect });
    idToken = (await engine.login()).IdToken;
  });
  afterAll(async () => engine?.close());

  async function createBrokerKey(active: boolean): Promise<{ guid: string; value: string }> {
    const created = await engine.api('POST', '/broker/api-keys', { headers: { Authorization: idToken }, body: { name: 'server', active } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: true, data: 'Item was created successfully' });
    const guid = created.body.url.split('/').pop();
    expect(created.body.url).toBe(`${engine.ctx.config.publicUrl}/broker/api-keys/${guid}`);
    const read = await engine.api('GET', `/broker/api-keys/${guid}`, { headers: { Authorization: idToken } });
    expect(read.body).toMatchObject({ status: true, data: { name: 'server', guid, active: active ? 1 : 0 } });
    return { guid, value: read.body.data.value };
  }

  it.skipIf(skip)('creates a broker key whose value opens private paths', async () => {
    const key = await createBrokerKey(true);
    const meta = await engine.api('POST', '/images/private/meta', { headers: { 'X-Api-Key': key.value }, body: { meta: { photographer: 'Ann' } } });
    expect(meta.status).toBe(201);
    expect(meta.body).toMatchObject({ status: true, data: 'Item was created successfully' });
    const read = await engine.api('GET', `/images/private/meta/${meta.body.guid}`, { headers: { 'X-Api-Key': key.value } });
    expect(read.body.data.meta).toEqual({ photographer: 'Ann' });
  });

  it.skipIf(skip)('refuses a key created inactive, a deactivated key and a deleted key at once', async () => {
    const inactive = await createBrokerKey(false);
    expect((await engine.api('POST', '/images/private/meta', { headers: { 'X-Api-Key': inactive.value }, body: { meta: { a: 'b' } } })).status).toBe(401);

    const key = await createBrokerKey(true);
    const use = () => engine.api('POST', '/images/private/meta', { headers: { 'X-Api-Key': key.value }, body: { meta: { a: 'b' } } });
    expect((await use()).status).toBe(201);
    await engine.api('PUT', `/broker/api-keys/${key.guid}`, { headers: { Authorization: idToken }, body: { active: false } });
    expect((await use()).status).toBe(401);
    await engine.api('PUT', `/broker/api-keys/${key.guid}`, { headers: { Authorization: idToken }, body: { active: true, name: 'renamed' } });
    expect((await use()).status).toBe(201);
    const list = await engine.api('GET', '/broker/api-keys', { headers: { Authorization: idToken } });
    expect(list.body.data.find((k: { guid: string }) => k.guid === key.guid).name).toBe('renamed');
    const deleted = await engine.api('DELETE', `/broker/api-keys/${key.guid}`, { headers: { Authorization: idToken } });
    expect(deleted.body).toEqual({ status: true, data: 'Item was deleted successfully' });
    const refused = await use();
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe('INVALID_API_KEY');
  });

  it.skipIf(skip)('manages live keys with the live answer shape, and a key cannot mint keys', async () => {
    const created = await engine.api('POST', '/api-keys', { headers: { Authorization: idToken }, body: { name: 'live-ops' } });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ name: 'live-ops', enabled: true });
    expect(typeof created.body.id).toBe('string');
    expect(typeof created.body.value).toBe('string');
    const mint = await engine.api('POST', '/api-keys', { headers: { 'X-Api-Key': created.body.value }, body: { name: 'x' } });
    expect(mint.status).toBe(403);
    const disabled = await engine.api('PUT', `/api-keys/${created.body.id}`, { headers: { Authorization: idToken }, body: { enabled: false } });
    expect(disabled.body.enabled).toBe(false);
    expect((await engine.api('GET', `/api-keys/${created.body.id}`, { headers: { 'X-Api-Key': created.body.value } })).status).toBe(401);
    expect((await engine.api('DELETE', `/api-keys/${created.body.id}`, { headers: { Authorization: idToken } })).status).toBe(200);
    expect((await engine.api('GET', `/api-keys/${created.body.id}`, { headers: { Authorization: idToken } })).status).toBe(404);
  });

  it.skipIf(skip)('stores key values encrypted: the database alone does not hold them', async () => {
    const key = await createBrokerKey(true);
    const rows = await engine.ctx.store.db.selectFrom('api_keys').selectAll().execute();
    expect(rows.length).toBeGreaterThan(0);
    expect(JSON.stringify(rows)).not.toContain(key.value);
  });
});
