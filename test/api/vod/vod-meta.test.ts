// VOD metadata (spec 2.12): create on both schemes, custom fields against a meta group, reserved names, PUT in a
// transaction; upload settings (2.13).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { META_GROUP_ATTACHMENTS } from '../../../src/meta-groups/meta-group.schema.js';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { apiKey, createMeta } from './helpers.js';

let engine: TestEngine;
let key: string;
let idToken: string;
let groupGuid: string;

beforeAll(async () => {
  engine = await startTestEngine();
  key = await apiKey(engine);
  idToken = (await engine.login()).IdToken;
  const group = await engine.api('POST', `/organizations/${engine.defaultOrganizationId}/meta-groups`, {
    headers: { Authorization: idToken },
    body: {
      attachment: META_GROUP_ATTACHMENTS[0].guid, name: 'Film',
      fields: [
        { name: 'rating', type: 'enum', required: true, additionalData: { enumOptions: ['G', 'PG', 'R'] } },
        { name: 'director', type: 'string', min: 2, max: 20 },
      ],
    },
  });
  groupGuid = group.body.guid;
});
afterAll(async () => engine?.close());

const info = async (guid: string) => (await engine.api('GET', `/broker/vod/list/${guid}/info`)).body.data;

describe('VOD metadata', () => {
  it('creates metadata with an API key and with an ID token and returns the guid', async () => {
    const body = { description: 'A clip', type: 'source', title: 'Clip', originalFileName: 'clip.mp4', imageUrl: 'https://example.com/a.jpg',
      custom_data: 'anything', group: 'g1', genre: 'drama' };
    const viaKey = await engine.api('POST', '/broker/private/vod/meta', { headers: { 'X-Api-Key': key }, body });
    expect(viaKey.status).toBe(201);
    expect(viaKey.body).toMatchObject({ status: true, data: { guid: expect.any(String) } });
    const viaToken = await engine.api('POST', '/broker/vod/meta', { headers: { Authorization: idToken }, body });
    expect(viaToken.status).toBe(201);
    const i = await info(viaToken.body.data.guid);
    expect(i).toMatchObject({ status: 'created', encode: true, originalFileName: 'clip.mp4', meta: body });
    expect((await engine.api('POST', '/broker/vod/meta', { headers: { 'X-Api-Key': key }, body })).status).toBe(401);
    expect((await engine.api('POST', '/broker/private/vod/meta', { body })).status).toBe(401);
  });

  it('stores custom fields as given without a meta group, and refuses reserved names', async () => {
    const guid = await createMeta(engine, key, { season: 3, tags: ['a', 'b'] });
    expect((await info(guid)).meta).toMatchObject({ season: 3, tags: ['a', 'b'] });
    const reserved = await engine.api('POST', '/broker/private/vod/meta', { headers: { 'X-Api-Key': key }, body: { title: 'x', status: 'complete', hls: 1 } });
    expect(reserved.status).toBe(400);
    expect(reserved.body.fields.map((f: { field: string }) => f.field).sort()).toEqual(['body.hls', 'body.status']);
    const badType = await engine.api('POST', '/broker/private/vod/meta', { headers: { 'X-Api-Key': key }, body: { type: 'movie' } });
    expect(badType.status).toBe(400);
  });

  it('validates custom fields against the selected meta group', async () => {
    const ok = await engine.api('POST', '/broker/private/vod/meta', { headers: { 'X-Api-Key': key }, body: { title: 'F', selectedMetaGroupGuid: groupGuid, rating: 'PG', director: 'Ann' } });
    expect(ok.status).toBe(201);
    const bad = await engine.api('POST', '/broker/private/vod/meta', { headers: { 'X-Api-Key': key }, body: { title: 'F', selectedMetaGroupGuid: groupGuid, rating: 'X', director: 'A', extra: 1 } });
    expect(bad.status).toBe(400);
    expect(bad.body.fields.map((f: { field: string }) => f.field).sort()).toEqual(['body.director', 'body.extra', 'body.rating']);
    const missing = await engine.api('POST', '/broker/private/vod/meta', { headers: { 'X-Api-Key': key }, body: { selectedMetaGroupGuid: groupGuid } });
    expect(missing.status).toBe(400);
    const unknown = await engine.api('POST', '/broker/private/vod/meta', { headers: { 'X-Api-Key': key }, body: { selectedMetaGroupGuid: 'nope', rating: 'G' } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.fields[0].field).toBe('body.selectedMetaGroupGuid');
  });

  it('updates metadata with PUT on both schemes', async () => {
    const guid = await createMeta(engine, key, { title: 'Old', season: 1 });
    const put = await engine.api('PUT', `/broker/private/vod/list/${guid}`, { headers: { 'X-Api-Key': key }, body: { title: 'New', season: null, episode: 2 } });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ status: true, data: 'Source was updated successfully' });
    const m = (await info(guid)).meta;
    expect(m).toMatchObject({ title: 'New', episode: 2 });
    expect(m).not.toHaveProperty('season');
    const viaToken = await engine.api('PUT', `/broker/vod/list/${guid}`, { headers: { Authorization: idToken }, body: { selectedMetaGroupGuid: groupGuid, rating: 'R', episode: null } });
    expect(viaToken.status, JSON.stringify(viaToken.body)).toBe(200);
    expect((await info(guid)).meta).toMatchObject({ title: 'New', rating: 'R', selectedMetaGroupGuid: groupGuid });
    expect((await engine.api('PUT', '/broker/private/vod/list/00000000-0000-4000-8000-000000000000', { headers: { 'X-Api-Key': key }, body: { title: 'x' } })).status).toBe(404);
  });

  it('refuses a PUT that violates the meta group and changes nothing', async () => {
    const guid = await createMeta(engine, key, { title: 'Keep', selectedMetaGroupGuid: groupGuid, rating: 'G', director: 'Bob' });
    const before = await info(guid);
    const put = await engine.api('PUT', `/broker/private/vod/list/${guid}`, { headers: { 'X-Api-Key': key }, body: { title: 'Changed', rating: 'NC-17' } });
    expect(put.status).toBe(400);
    expect(put.body).toMatchObject({ status: false, code: 'VALIDATION_FAILED' });
    expect(put.body.fields.map((f: { field: string }) => f.field)).toEqual(['body.rating']);
    const after = await info(guid);
    expect(after.meta).toEqual(before.meta);
    expect(after.updatedAt).toBe(before.updatedAt);
    const reserved = await engine.api('PUT', `/broker/private/vod/list/${guid}`, { headers: { 'X-Api-Key': key }, body: { guid: 'x' } });
    expect(reserved.status).toBe(400);
  });

  it('answers the upload settings with values of this engine', async () => {
    for (const [p, headers, tus] of [
      ['/broker/private/upload-multipart', { 'X-Api-Key': key }, '/broker/private/upload'],
      ['/broker/upload-multipart', { Authorization: idToken }, '/broker/upload'],
    ] as const) {
      const answer = await engine.api('GET', p, { headers });
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({
        status: true,
        data: {
          identityProviderRegion: engine.ctx.config.defaultRegion, bucket: 'sources', bucketRegion: engine.ctx.config.defaultRegion,
          identityPoolId: `${engine.ctx.config.publicUrl}${tus}`, logins: { identityProvider: engine.ctx.config.publicUrl },
        },
      });
    }
  });

  it('answers 404 for encode and upload of an unknown guid, 409 for an encode without a file', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    expect((await engine.api('POST', `/broker/private/vod/encode/${unknown}`, { headers: { 'X-Api-Key': key } })).status).toBe(404);
    expect((await engine.api('POST', `/broker/private/vod/encode/audio/${unknown}`, { headers: { 'X-Api-Key': key } })).status).toBe(404);
    const up = await fetch(`${engine.url}/broker/private/vod/upload/${unknown}`, { method: 'POST', headers: { 'X-Api-Key': key, 'Content-Type': 'video/mp4' }, body: 'xx' });
    expect(up.status).toBe(404);
    const guid = await createMeta(engine, key);
    expect((await engine.api('POST', `/broker/private/vod/encode/${guid}`, { headers: { 'X-Api-Key': key } })).status).toBe(409);
    const wrongType = await fetch(`${engine.url}/broker/private/vod/upload/${guid}`, { method: 'POST', headers: { 'X-Api-Key': key, 'Content-Type': 'text/plain' }, body: 'xx' });
    expect(wrongType.status).toBe(415);
    const empty = await fetch(`${engine.url}/broker/private/vod/upload/${guid}`, { method: 'POST', headers: { 'X-Api-Key': key, 'Content-Type': 'video/mp4' }, body: '' });
    expect(empty.status).toBe(400);
  });
});
