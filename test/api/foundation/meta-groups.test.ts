import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateAgainstMetaGroup, META_GROUP_ATTACHMENTS } from '../../../src/meta-groups/meta-group.schema.js';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';

describe('meta groups', () => {
  let engine: TestEngine;
  let auth: Record<string, string>;
  let base: string;

  beforeAll(async () => {
    engine = await startTestEngine();
    auth = { Authorization: (await engine.login()).IdToken };
    base = `/organizations/${engine.defaultOrganizationId}`;
  });
  afterAll(async () => engine?.close());

  it('lists the four attachment types with stable guids', async () => {
    const first = await engine.api('GET', `${base}/meta-group-attachments`, { headers: auth });
    expect(first.body.data.map((a: { name: string }) => a.name)).toEqual(['video asset', 'playlist asset', 'channel asset', 'listing asset']);
    const second = await engine.api('GET', `${base}/meta-group-attachments`, { headers: auth });
    expect(second.body.data).toEqual(first.body.data);
  });

  it('creates, reads, lists, updates and deletes a meta group', async () => {
    const body = {
      attachment: META_GROUP_ATTACHMENTS[0].guid,
      name: 'Film',
      fields: [
        { name: 'rating', type: 'enum', required: true, additionalData: { enumOptions: ['G', 'PG', 'R'] } },
        { name: 'director', type: 'string', min: 2, max: 40 },
      ],
    };
    const created = await engine.api('POST', `${base}/meta-groups`, { headers: auth, body });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: true, data: 'Item was created successfully' });
    const guid = created.body.guid;
    const read = await engine.api('GET', `${base}/meta-groups/${guid}`, { headers: auth });
    expect(read.body.data).toMatchObject({ guid, name: 'Film', attachment: body.attachment });
    expect(read.body.data.fields[0]).toMatchObject({ name: 'rating', type: 'enum', required: true });
    const list = await engine.api('GET', `${base}/meta-groups`, { headers: auth });
    expect(list.body.data.map((g: { guid: string }) => g.guid)).toContain(guid);
    const updated = await engine.api('PUT', `${base}/meta-groups/${guid}`, { headers: auth, body: { ...body, name: 'Feature film' } });
    expect(updated.body.data).toBe('Item was updated successfully');
    expect((await engine.api('GET', `${base}/meta-groups/${guid}`, { headers: auth })).body.data.name).toBe('Feature film');
    expect((await engine.api('DELETE', `${base}/meta-groups/${guid}`, { headers: auth })).body.data).toBe('Item was deleted successfully');
    expect((await engine.api('GET', `${base}/meta-groups/${guid}`, { headers: auth })).status).toBe(404);
  });

  it('validates values against a group: type, enum, required and character limits', () => {
    const group = {
      fields: [
        { name: 'rating', type: 'enum' as const, required: true, additionalData: { enumOptions: ['G', 'PG'] } },
        { name: 'director', type: 'string' as const, required: false, min: 2, max: 5 },
        { name: 'year', type: 'number' as const, required: false },
        { name: 'extras', type: 'json' as const, required: false },
        { name: 'hd', type: 'boolean' as const, required: false },
      ],
    };
    expect(validateAgainstMetaGroup(group, { rating: 'G', director: 'Ann', year: 1999, extras: { a: 1 }, hd: true })).toEqual([]);
    const problems = validateAgainstMetaGroup(group, { director: 'A', year: '1999', extras: '{bad', hd: 'yes' }, 'body');
    expect(problems.map((p) => p.field).sort()).toEqual(['body.director', 'body.extras', 'body.hd', 'body.rating', 'body.year']);
    expect(validateAgainstMetaGroup(group, { rating: 'X' })[0]?.message).toMatch(/one of G, PG/);
    expect(validateAgainstMetaGroup(group, { rating: 'G', director: 'Annabel' })[0]?.message).toMatch(/at most 5/);
  });
});
