import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';

describe('ad-insertion configurations', () => {
  let engine: TestEngine;
  let auth: Record<string, string>;
  const body = {
    name: 'Sports',
    ad_server: 'https://ads.example.test/vast?sid=[session.id]&d=[avail.duration]&g=[player_params.genre]',
    type: 'live',
    source_url: 'https://origin.example.test/live/',
    slate_ad: 'https://cdn.example.test/slate.png',
  };

  beforeAll(async () => {
    engine = await startTestEngine();
    auth = { Authorization: (await engine.login()).IdToken };
  });
  afterAll(async () => engine?.close());

  it('creates, lists, reads, updates and deletes a configuration with the spec strings', async () => {
    const created = await engine.api('POST', '/broker/adinserts', { headers: auth, body });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ status: true, data: 'Item was created successfully' });
    const guid = created.body.guid as string;
    const list = await engine.api('GET', '/broker/adinserts', { headers: auth });
    expect(list.body.status).toBe(true);
    const item = list.body.data.find((c: { guid: string }) => c.guid === guid);
    expect(item).toMatchObject({
      name: 'Sports', guid, adServer: body.ad_server, type: 'live', sourceUrl: body.source_url, slateAd: body.slate_ad,
      masterEndpoint: `${engine.ctx.config.publicUrl}/v1/master/${guid}/`,
    });
    expect(typeof item.createdAt).toBe('number');
    expect(item.updatedAt).toBe(item.createdAt);
    const read = await engine.api('GET', `/broker/adinserts/${guid}`, { headers: auth });
    expect(read.body.data).toEqual(item);

    const updated = await engine.api('PUT', `/broker/adinserts/${guid}`, { headers: auth, body: { name: 'Sports 2', ad_server: 'http://ads.example.test/v2', type: 'broker' } });
    expect(updated.body).toEqual({ status: true, data: 'Item was updated successfully' });
    const after = await engine.api('GET', `/broker/adinserts/${guid}`, { headers: auth });
    expect(after.body.data).toMatchObject({ name: 'Sports 2', adServer: 'http://ads.example.test/v2', type: 'broker', sourceUrl: body.source_url });

    const removed = await engine.api('DELETE', `/broker/adinserts/${guid}`, { headers: auth });
    expect(removed.body).toEqual({ status: true, data: 'Item was deleted successfully' });
    expect((await engine.api('GET', `/broker/adinserts/${guid}`, { headers: auth })).status).toBe(404);
    expect((await engine.api('DELETE', `/broker/adinserts/${guid}`, { headers: auth })).status).toBe(404);
  });

  it('serves the private paths with an API key and refuses them with an ID token', async () => {
    const key = await engine.api('POST', '/broker/api-keys', { headers: auth, body: { name: 'adinserts', active: true } });
    const value = (await engine.api('GET', `/broker/api-keys/${key.body.guid}`, { headers: auth })).body.data.value as string;
    const created = await engine.api('POST', '/broker/private/adinserts', { headers: { 'X-Api-Key': value }, body });
    expect(created.body.data).toBe('Item was created successfully');
    expect((await engine.api('GET', '/broker/private/adinserts', { headers: auth })).status).toBe(401);
    const list = await engine.api('GET', '/broker/private/adinserts', { headers: { 'X-Api-Key': value } });
    expect(list.body.data.some((c: { guid: string }) => c.guid === created.body.guid)).toBe(true);
  });

  it('rejects bad URLs and missing fields with 400 listing every field', async () => {
    const bad = await engine.api('POST', '/broker/adinserts', { headers: auth, body: { name: 'x', type: 'vod', ad_server: 'ftp://ads.example.test/', source_url: 'not a url', slate_ad: 'javascript:alert(1)' } });
    expect(bad.status).toBe(400);
    expect(bad.body.status).toBe(false);
    const fields = (bad.body.fields as Array<{ field: string }>).map((f) => f.field).sort();
    expect(fields).toEqual(expect.arrayContaining(['ad_server', 'slate_ad', 'source_url', 'type']));
    const missing = await engine.api('POST', '/broker/adinserts', { headers: auth, body: {} });
    expect(missing.status).toBe(400);
    expect((missing.body.fields as Array<{ field: string }>).map((f) => f.field)).toEqual(expect.arrayContaining(['name', 'ad_server', 'type', 'source_url']));
    const created = await engine.api('POST', '/broker/adinserts', { headers: auth, body });
    const put = await engine.api('PUT', `/broker/adinserts/${created.body.guid}`, { headers: auth, body: { name: 'only a name' } });
    expect(put.status).toBe(400);
    expect((put.body.fields as Array<{ field: string }>).map((f) => f.field)).toEqual(expect.arrayContaining(['ad_server', 'type']));
  });

  it("answers 404 for another organization's or an unknown guid and needs credentials", async () => {
    expect((await engine.api('GET', '/broker/adinserts/00000000-0000-4000-8000-000000000000', { headers: auth })).status).toBe(404);
    expect((await engine.api('GET', '/broker/adinserts')).status).toBe(401);
  });

  it('gives the live channels an organization-scoped lookup through the cache, invalidated on update', async () => {
    const created = await engine.api('POST', '/broker/adinserts', { headers: auth, body });
    const guid = created.body.guid as string;
    const cache = engine.ctx.services.adinserts!;
    expect((await cache.get(guid))?.name).toBe('Sports');
    expect(await cache.findForOrganization('another-org', guid)).toBeUndefined();
    expect((await cache.findForOrganization(engine.defaultOrganizationId, guid))?.sourceUrl).toBe(body.source_url);
    await engine.api('PUT', `/broker/adinserts/${guid}`, { headers: auth, body: { ...body, name: 'Renamed' } });
    expect((await cache.get(guid))?.name).toBe('Renamed');
    await engine.api('DELETE', `/broker/adinserts/${guid}`, { headers: auth });
    expect(await cache.get(guid)).toBeUndefined();
  });
});
