import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { catalogBlueprint } from '../live/live-helpers.js';

describe('PUT of what GET returned, and blueprint ids', () => {
  let engine: TestEngine;
  let auth: Record<string, string>;
  const api = (method: string, url: string, body?: unknown) => engine.api(method, url, { headers: auth, ...(body !== undefined ? { body } : {}) });
  const fieldsOf = (answer: { body: any }) => (answer.body.fields ?? []).map((f: { field: string }) => f.field);

  beforeAll(async () => {
    engine = await startTestEngine();
    auth = { Authorization: (await engine.login()).IdToken };
  });
  afterAll(async () => engine?.close());

  describe('an embedded blueprint id', () => {
    const blueprint = catalogBlueprint('rtmp-push-abr');
    const count = async () => (await api('GET', '/workflows')).body.items.length as number;

    it('refuses a workflow whose blueprint id names no catalog blueprint with 404 naming it, storing nothing', async () => {
      const before = await count();
      const answer = await api('POST', '/workflows', { name: 'x', blueprint: { ...blueprint, id: 'no-such-blueprint' } });
      expect(answer.status).toBe(404);
      expect(answer.body.code).toBe('BLUEPRINT_NOT_FOUND');
      expect(answer.body.description).toContain('no-such-blueprint');
      expect(await count()).toBe(before);
    });

    it('accepts a catalog id and a custom blueprint without id', async () => {
      expect((await api('POST', '/workflows', { name: 'catalog', blueprint })).status).toBe(200);
      const { id: _id, ...custom } = blueprint;
      void _id;
      const created = await api('POST', '/workflows', { name: 'custom', blueprint: custom });
      expect(created.status).toBe(200);
      expect((await api('GET', `/workflows/${created.body.id}`)).body.blueprintId).toBeNull();
    });

    it('refuses a PUT that swaps in an unknown blueprint id, changing nothing', async () => {
      const created = await api('POST', '/workflows', { name: 'kept', blueprint });
      const answer = await api('PUT', `/workflows/${created.body.id}`, { name: 'renamed', blueprint: { ...blueprint, id: 'gone' } });
      expect(answer.status).toBe(404);
      expect(answer.body.code).toBe('BLUEPRINT_NOT_FOUND');
      expect((await api('GET', `/workflows/${created.body.id}`)).body.name).toBe('kept');
    });
  });

  describe('PUT /inputs/{id}', () => {
    const createBody = { name: 'Studio', type: 'VIRTUAL_INPUT', protocol: 'SRT_PUSH', region: 'local', cidrs: ['203.0.113.0/24'] };
    let id: string;
    beforeAll(async () => {
      id = (await api('POST', '/inputs', createBody)).body.id;
      // Spec 3.4 allows edits only while a channel uses the input (ACTIVE): a running workflow naming it.
      const workflow = (await api('POST', '/workflows', { name: 'uses', blueprint: catalogBlueprint('rtmp-push-abr') })).body.id;
      const db = engine.ctx.store.db;
      const row = await db.selectFrom('workflows').select('blueprint').where('id', '=', workflow).executeTakeFirstOrThrow();
      const blueprint = JSON.parse(row.blueprint);
      blueprint.components.encoder.input.managedInputId = id;
      await db.updateTable('workflows').set({ blueprint: JSON.stringify(blueprint), status: 'RUNNING' }).where('id', '=', workflow).execute();
      expect((await api('GET', `/inputs/${id}`)).body.status).toBe('ACTIVE');
    });

    it('accepts the body the input was created with, unchanged type and protocol included', async () => {
      const answer = await api('PUT', `/inputs/${id}`, { ...createBody, name: 'Studio 2' });
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ name: 'Studio 2', type: 'VIRTUAL_INPUT', protocol: 'SRT_PUSH' });
    });

    it('accepts the whole answer of GET sent back with a new name', async () => {
      const read = (await api('GET', `/inputs/${id}`)).body;
      const answer = await api('PUT', `/inputs/${id}`, { ...read, name: 'Studio 3' });
      expect(answer.status).toBe(200);
      expect(answer.body.name).toBe('Studio 3');
    });

    it.each([
      ['type', { type: 'CONNECTED_DEVICE' }],
      ['protocol', { protocol: 'RIST' }],
      ['region', { region: 'elsewhere' }],
      ['id', { id: 'another' }],
    ])('refuses a change of %s naming it, changing nothing', async (field, change) => {
      const before = (await api('GET', `/inputs/${id}`)).body;
      const answer = await api('PUT', `/inputs/${id}`, { ...createBody, name: 'Changed', ...change });
      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe('VALIDATION_FAILED');
      expect(fieldsOf(answer)).toEqual([field]);
      expect(answer.body.description).toMatch(/cannot change/);
      expect((await api('GET', `/inputs/${id}`)).body).toEqual(before);
    });

    it('still refuses a field no input has', async () => {
      const answer = await api('PUT', `/inputs/${id}`, { name: 'x', colour: 'red' });
      expect(answer.status).toBe(400);
    });
  });

  describe('PUT /workflows/{id}', () => {
    it('accepts GET\'s answer back, ignores its status and refuses a changed creation time', async () => {
      const created = await api('POST', '/workflows', { name: 'Show', blueprint: catalogBlueprint('rtmp-push-abr') });
      const read = (await api('GET', `/workflows/${created.body.id}`)).body;
      const same = await api('PUT', `/workflows/${read.id}`, { ...read, name: 'Show 2', status: 'RUNNING' });
      expect(same.body.fields).toBeUndefined();
      expect(same.status).toBe(200);
      expect(same.body).toMatchObject({ name: 'Show 2', status: 'READY' });
      const changed = await api('PUT', `/workflows/${read.id}`, { ...read, created: '2020-01-01T00:00:00.000Z' });
      expect(changed.status).toBe(400);
      expect(fieldsOf(changed)).toEqual(['created']);
    });
  });

  describe('PUT of API keys and meta groups', () => {
    it('accepts a broker key as GET returned it and refuses a new value', async () => {
      const created = await api('POST', '/broker/api-keys', { name: 'k', active: true });
      const read = (await api('GET', `/broker/api-keys/${created.body.guid}`)).body.data;
      expect((await api('PUT', `/broker/api-keys/${read.guid}`, { ...read, name: 'k2' })).status).toBe(200);
      const changed = await api('PUT', `/broker/api-keys/${read.guid}`, { ...read, value: 'mpe_mine' });
      expect(changed.status).toBe(400);
      expect(fieldsOf(changed)).toEqual(['value']);
      expect((await api('GET', `/broker/api-keys/${read.guid}`)).body.data).toMatchObject({ name: 'k2', value: read.value });
    });

    it('accepts a live key as GET returned it and refuses another id', async () => {
      const created = (await api('POST', '/api-keys', { name: 'live' })).body;
      expect((await api('PUT', `/api-keys/${created.id}`, { ...created, enabled: false })).status).toBe(200);
      const changed = await api('PUT', `/api-keys/${created.id}`, { ...created, id: 'x' });
      expect(changed.status).toBe(400);
      expect(fieldsOf(changed)).toEqual(['id']);
    });

    it('accepts a meta group as GET returned it and refuses another guid', async () => {
      const orgId = engine.defaultOrganizationId;
      const attachment = (await api('GET', `/organizations/${orgId}/meta-group-attachments`)).body.data[0].guid;
      const created = await api('POST', `/organizations/${orgId}/meta-groups`, { attachment, name: 'G', fields: [{ name: 'a', type: 'string' }] });
      const read = (await api('GET', `/organizations/${orgId}/meta-groups/${created.body.guid}`)).body.data;
      expect((await api('PUT', `/organizations/${orgId}/meta-groups/${read.guid}`, { ...read, name: 'G2' })).status).toBe(200);
      const changed = await api('PUT', `/organizations/${orgId}/meta-groups/${read.guid}`, { ...read, guid: 'other' });
      expect(changed.status).toBe(400);
      expect(fieldsOf(changed)).toEqual(['guid']);
    });
  });

  describe('PUT of broker channels', () => {
    it('accepts a channel as GET returned it and refuses another guid', async () => {
      const created = await api('POST', '/broker/channels', { name: 'C', description: '', active: 1, type: 'virtual', hasAds: 0 });
      expect(created.status).toBeLessThan(300);
      const read = (await api('GET', `/broker/channels/${created.body.guid}`)).body.data;
      expect((await api('PUT', `/broker/channels/${read.guid}`, { ...read, name: 'C2' })).status).toBe(200);
      const changed = await api('PUT', `/broker/channels/${read.guid}`, { ...read, guid: 'other' });
      expect(changed.status).toBe(400);
      expect(fieldsOf(changed)).toEqual(['guid']);
      expect((await api('GET', `/broker/channels/${read.guid}`)).body.data.name).toBe('C2');
    });
  });

  describe('selecting a meta group over stored free fields', () => {
    it('names the stored field, says how to drop it, and drops it when sent as null', async () => {
      const orgId = engine.defaultOrganizationId;
      const attachment = (await api('GET', `/organizations/${orgId}/meta-group-attachments`)).body.data[0].guid;
      const group = (await api('POST', `/organizations/${orgId}/meta-groups`, { attachment, name: 'Film', fields: [{ name: 'rating', type: 'number' }] })).body.guid;
      const vod = await api('POST', '/broker/vod/meta', { title: 'Old clip', legacyCode: 'A-7' });
      const guid = vod.body.data.guid;
      const refused = await api('PUT', `/broker/vod/list/${guid}`, { selectedMetaGroupGuid: group, rating: 5 });
      expect(refused.status).toBe(400);
      expect(fieldsOf(refused)).toEqual(['stored.legacyCode']);
      expect(refused.body.description).toContain('"legacyCode": null');
      const info = async () => (await engine.api('GET', `/broker/vod/list/${guid}/info`)).body;
      expect((await info()).meta ?? (await info()).data?.meta).toMatchObject({ legacyCode: 'A-7' });
      const accepted = await api('PUT', `/broker/vod/list/${guid}`, { selectedMetaGroupGuid: group, rating: 5, legacyCode: null });
      expect(accepted.status).toBe(200);
      const meta = (await info()).meta ?? (await info()).data?.meta;
      expect(meta).toMatchObject({ selectedMetaGroupGuid: group, rating: 5 });
      expect(meta).not.toHaveProperty('legacyCode');
    });
  });
});
