// Issue 28: an adinsert configuration's optional ad_server_max_rps, stored on both dialects, validated, and read by
// the proxy through the configuration cache.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, postgresAvailable, startTestEngine, type TestEngine } from '../helpers/engine.js';

const postgres = await postgresAvailable();
const body = { name: 'Big night', type: 'live', ad_server: 'https://ads.example.test/vast?sid=[session.id]', source_url: 'https://origin.example.test/live/' };

describe.each(DIALECTS)('ad_server_max_rps on %s', (dialect) => { describe.skipIf(dialect === 'postgres' && !postgres)('', () => {
  let engine: TestEngine;
  let auth: Record<string, string>;
  beforeAll(async () => {
    engine = await startTestEngine({ dialect });
    auth = { Authorization: (await engine.login()).IdToken };
  });
  afterAll(async () => engine?.close());

  const read = async (guid: string) => (await engine.api('GET', `/broker/adinserts/${guid}`, { headers: auth })).body.data as Record<string, unknown>;

  it('is stored when given, kept by an update that leaves it out, and removed with null', async () => {
    const created = await engine.api('POST', '/broker/adinserts', { headers: auth, body: { ...body, ad_server_max_rps: 200 } });
    expect(created.status).toBe(200);
    const guid = created.body.guid as string;
    expect((await read(guid)).adServerMaxRps).toBe(200);
    expect((await engine.ctx.services.adinserts!.get(guid))?.adServerMaxRps).toBe(200);
    await engine.api('PUT', `/broker/adinserts/${guid}`, { headers: auth, body: { ...body, name: 'Renamed' } });
    expect(await read(guid)).toMatchObject({ name: 'Renamed', adServerMaxRps: 200 });
    await engine.api('PUT', `/broker/adinserts/${guid}`, { headers: auth, body: { ...body, ad_server_max_rps: 50 } });
    expect((await engine.ctx.services.adinserts!.get(guid))?.adServerMaxRps).toBe(50); // the cache is invalidated
    await engine.api('PUT', `/broker/adinserts/${guid}`, { headers: auth, body: { ...body, ad_server_max_rps: null } });
    expect(await read(guid)).not.toHaveProperty('adServerMaxRps');
    const plain = await engine.api('POST', '/broker/adinserts', { headers: auth, body });
    expect(await read(plain.body.guid as string)).not.toHaveProperty('adServerMaxRps');
  });

  it('refuses a cap that is not a positive whole number, naming the field, and changes nothing', async () => {
    for (const bad of [0, -5, 2.5, '100', 1_000_001, null]) {
      const res = await engine.api('POST', '/broker/adinserts', { headers: auth, body: { ...body, ad_server_max_rps: bad } });
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect((res.body.fields as Array<{ field: string }>).map((f) => f.field)).toEqual(['ad_server_max_rps']);
    }
    const created = await engine.api('POST', '/broker/adinserts', { headers: auth, body: { ...body, ad_server_max_rps: 10 } });
    const guid = created.body.guid as string;
    const put = await engine.api('PUT', `/broker/adinserts/${guid}`, { headers: auth, body: { ...body, ad_server_max_rps: 0 } });
    expect(put.status).toBe(400);
    expect(put.body.code).toBeTruthy();
    expect((await read(guid)).adServerMaxRps).toBe(10);
  });
}); });
