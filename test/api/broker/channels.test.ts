// Issue 15 part 1: broker channels (spec 2.8, 4.3), every rule of bad input → 4xx with its code and nothing stored changed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { META_GROUP_ATTACHMENTS } from '../../../src/meta-groups/meta-group.schema.js';
import { DIALECTS, postgresAvailable } from '../../helpers/engine.js';
import { startBroker, type BrokerHarness } from './broker-helpers.js';

const postgres = await postgresAvailable();

const EXTERNAL = 'https://origin.example.test/live/channel1/master.m3u8';

describe.each(DIALECTS)('broker channels on %s', (dialect) => { describe.skipIf(dialect === 'postgres' && !postgres)('', () => {
  let h: BrokerHarness;
  let liveAd: string;
  let brokerAd: string;
  let linearAd: string;

  const external = { name: 'News', description: 'All day news', active: 1, type: 'externalHLS', externalUrl: EXTERNAL, hasAds: 0 };
  const virtual = { name: 'Films', description: 'Films from VOD', active: 1, type: 'virtual', hasAds: 0, loopInterval: 2 };

  beforeAll(async () => {
    h = await startBroker({ dialect });
    const ad = async (type: string, source: string) => (await h.engine.api('POST', '/broker/adinserts', {
      headers: h.admin, body: { name: `${type} ads`, type, ad_server: 'https://ads.example.test/vast', source_url: source },
    })).body.guid as string;
    liveAd = await ad('live', 'https://origin.example.test/live/');
    brokerAd = await ad('broker', `${h.engine.ctx.config.publicUrl}/linear/`);
    linearAd = await ad('live', `${h.engine.ctx.config.publicUrl}/linear/`);
  });
  afterAll(async () => h?.engine.close());

  const create = (body: unknown, headers = h.admin) => h.engine.api('POST', '/broker/channels', { headers, body });
  const get = (guid: string, headers = h.admin) => h.engine.api('GET', `/broker/channels/${guid}`, { headers });

  it('creates, lists, reads, updates and deletes with the spec strings and a guid', async () => {
    const created = await create(external);
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ status: true, data: 'Item was created successfully', guid: expect.any(String) });
    const guid = created.body.guid as string;
    const read = await get(guid);
    expect(read.body.data).toMatchObject({ ...external, guid, allowedForUsers: [], allowedForRoles: [], restrictedFor: [], meta: {}, playbackUrl: EXTERNAL });
    expect((await h.list('/broker/channels')).map((c) => (c as { guid: string }).guid)).toContain(guid);

    const updated = await h.engine.api('PUT', `/broker/channels/${guid}`, { headers: h.admin, body: { ...external, name: 'News 24', hasAds: 1, adinsert: liveAd } });
    expect(updated.body).toEqual({ status: true, data: 'Item was updated successfully' });
    const after = (await get(guid)).body.data;
    expect(after).toMatchObject({ name: 'News 24', hasAds: 1, adinsert: liveAd });
    // With ads the player goes through the proxy: masterEndpoint + the path after source_url (spec 4.2).
    expect(after.playbackUrl).toBe(`${h.engine.ctx.config.publicUrl}/v1/master/${liveAd}/channel1/master.m3u8`);

    const removed = await h.engine.api('DELETE', `/broker/channels/${guid}`, { headers: h.admin });
    expect(removed.body).toEqual({ status: true, data: 'Item was deleted successfully' });
    expect((await get(guid)).status).toBe(404);
    expect((await h.engine.api('DELETE', `/broker/channels/${guid}`, { headers: h.admin })).status).toBe(404);
  });

  it('gives a virtual channel its linear HLS URL, through the proxy when it has ads', async () => {
    const plain = (await get((await create(virtual)).body.guid)).body.data;
    expect(plain.playbackUrl).toMatch(new RegExp(`^${h.engine.ctx.config.publicUrl}/linear/${plain.guid}/[A-Za-z0-9_-]{22}/master\\.m3u8$`));
    expect(plain.loopInterval).toBe(2);
    const withAds = (await get((await create({ ...virtual, hasAds: 1, adinsert: linearAd })).body.guid)).body.data;
    expect(withAds.playbackUrl).toMatch(new RegExp(`^${h.engine.ctx.config.publicUrl}/v1/master/${linearAd}/${withAds.guid}/[A-Za-z0-9_-]{22}/master\\.m3u8$`));
    // the type names the service a configuration belongs to, not the kind of stream: a broker one serves live HLS too
    const brokerAds = await create({ ...virtual, hasAds: 1, adinsert: brokerAd });
    expect(brokerAds.status, JSON.stringify(brokerAds.body)).toBe(200);
    const viaBroker = (await get(brokerAds.body.guid)).body.data;
    expect(viaBroker.playbackUrl).toMatch(new RegExp(`^${h.engine.ctx.config.publicUrl}/v1/master/${brokerAd}/${viaBroker.guid}/[A-Za-z0-9_-]{22}/master\\.m3u8$`));
  });

  it('serves the private paths with an API key', async () => {
    const created = await h.engine.api('POST', '/broker/private/channels', { headers: h.key, body: external });
    expect(created.body.data).toBe('Item was created successfully');
    const read = await h.engine.api('GET', `/broker/private/channels/${created.body.guid}`, { headers: h.key });
    expect(read.body.data.name).toBe('News');
    expect((await h.engine.api('GET', '/broker/private/channels', { headers: h.admin })).status).toBe(401);
  });

  describe('refuses bad input with its code and changes nothing', () => {
    const cases: Array<[string, Record<string, unknown>, number, string, string]> = [
      ['externalHLS without externalUrl', { ...external, externalUrl: undefined }, 400, 'VALIDATION_FAILED', 'externalUrl'],
      ['an externalUrl that is not an .m3u8', { ...external, externalUrl: 'https://origin.example.test/live/index.mpd' }, 400, 'VALIDATION_FAILED', 'externalUrl'],
      ['an externalUrl that is not http(s)', { ...external, externalUrl: 'ftp://origin.example.test/a.m3u8' }, 400, 'VALIDATION_FAILED', 'externalUrl'],
      ['externalUrl on a virtual channel', { ...virtual, externalUrl: EXTERNAL }, 400, 'VALIDATION_FAILED', 'externalUrl'],
      ['hasAds without adinsert', { ...external, hasAds: 1 }, 400, 'VALIDATION_FAILED', 'adinsert'],
      ['an unknown adinsert', { ...external, hasAds: 1, adinsert: '00000000-0000-4000-8000-000000000000' }, 400, 'UNKNOWN_REFERENCE', 'adinsert'],
      ['active other than 0|1', { ...external, active: 2 }, 400, 'VALIDATION_FAILED', 'active'],
      ['hasAds as a boolean', { ...external, hasAds: true }, 400, 'VALIDATION_FAILED', 'hasAds'],
      ['an unknown type', { ...external, type: 'dash' }, 400, 'VALIDATION_FAILED', 'type'],
      ['a missing name', { ...external, name: undefined }, 400, 'VALIDATION_FAILED', 'name'],
      ['a missing description', { ...external, description: undefined }, 400, 'VALIDATION_FAILED', 'description'],
      ['a negative loopInterval', { ...virtual, loopInterval: -1 }, 400, 'VALIDATION_FAILED', 'loopInterval'],
      ['a zero loopInterval', { ...virtual, loopInterval: 0 }, 400, 'VALIDATION_FAILED', 'loopInterval'],
      ['loopInterval on an externalHLS channel', { ...external, loopInterval: 1 }, 400, 'VALIDATION_FAILED', 'loopInterval'],
      ['an unknown user in allowedForUsers', { ...external, allowedForUsers: ['00000000-0000-4000-8000-000000000001'] }, 400, 'UNKNOWN_REFERENCE', 'allowedForUsers'],
      ['an unknown user in restrictedFor', { ...external, restrictedFor: ['nobody'] }, 400, 'UNKNOWN_REFERENCE', 'restrictedFor'],
      ['an unknown role', { ...external, allowedForRoles: ['no-such-role'] }, 400, 'UNKNOWN_REFERENCE', 'allowedForRoles'],
      ['an unknown meta group', { ...external, selectedMetaGroupGuid: 'no-such-group', meta: { a: 1 } }, 400, 'UNKNOWN_REFERENCE', 'selectedMetaGroupGuid'],
    ];
    for (const [what, body, status, code, field] of cases) {
      it(`${what} → ${status} ${code}`, async () => {
        const before = await h.list('/broker/channels');
        const answer = await create(body);
        expect(answer.status).toBe(status);
        expect(answer.body).toMatchObject({ status: false, code });
        expect(answer.body.fields.map((f: { field: string }) => f.field)).toContain(field);
        expect(await h.list('/broker/channels')).toEqual(before);
      });
    }

    it("an adinsert whose source_url is not the stream's prefix → 400 ADINSERT_MISMATCH", async () => {
      const before = await h.list('/broker/channels');
      for (const body of [{ ...virtual, hasAds: 1, adinsert: liveAd },
        { ...external, externalUrl: 'https://elsewhere.example.test/a.m3u8', hasAds: 1, adinsert: liveAd }]) {
        const answer = await create(body);
        expect(answer.status).toBe(400);
        expect(answer.body.code).toBe('ADINSERT_MISMATCH');
      }
      expect(await h.list('/broker/channels')).toEqual(before);
    });

    it('a bad update leaves the stored channel as it was; an unknown guid is 404', async () => {
      const guid = (await create(external)).body.guid as string;
      const before = (await get(guid)).body.data;
      for (const body of [{ ...external, type: 'virtual' }, { ...external, hasAds: 1, adinsert: 'nope' }, { ...external, restrictedFor: ['nobody'] }]) {
        const answer = await h.engine.api('PUT', `/broker/channels/${guid}`, { headers: h.admin, body });
        expect(answer.status).toBe(400);
      }
      expect((await get(guid)).body.data).toEqual(before);
      expect((await h.engine.api('PUT', '/broker/channels/00000000-0000-4000-8000-000000000000', { headers: h.admin, body: external })).status).toBe(404);
    });
  });

  it('applies the access lists to ID-token readers; admins and API keys see every channel', async () => {
    const viewer = await h.user('viewer', 'vera');
    const editor = await h.user('editor', 'eddie');
    const restricted = (await create({ ...external, name: 'restricted', restrictedFor: [viewer.guid] })).body.guid as string;
    const forEditor = (await create({ ...external, name: 'editor only', allowedForUsers: [editor.guid] })).body.guid as string;
    const forViewers = (await create({ ...external, name: 'viewers', allowedForRoles: [h.roles.viewer] })).body.guid as string;
    const open = (await create({ ...external, name: 'open' })).body.guid as string;
    const names = async (auth: Record<string, string>) => new Set(((await h.engine.api('GET', '/broker/channels', { headers: auth })).body.data as Array<{ guid: string }>).map((c) => c.guid));

    const seenByViewer = await names(viewer.auth);
    expect(seenByViewer.has(restricted)).toBe(false);
    expect(seenByViewer.has(forEditor)).toBe(false);
    expect(seenByViewer.has(forViewers)).toBe(true);
    expect(seenByViewer.has(open)).toBe(true);
    expect((await get(restricted, viewer.auth)).status).toBe(404);
    expect((await get(forEditor, viewer.auth)).status).toBe(404);
    expect((await get(forViewers, viewer.auth)).status).toBe(200);

    const seenByEditor = await names(editor.auth);
    expect([...[restricted, forEditor, open]].every((g) => seenByEditor.has(g))).toBe(true);
    expect(seenByEditor.has(forViewers)).toBe(false);
    expect((await h.engine.api('DELETE', `/broker/channels/${forViewers}`, { headers: editor.auth })).status).toBe(404);

    const all = await names(h.admin);
    const byKey = new Set(((await h.engine.api('GET', '/broker/private/channels', { headers: h.key })).body.data as Array<{ guid: string }>).map((c) => c.guid));
    for (const g of [restricted, forEditor, forViewers, open]) {
      expect(all.has(g)).toBe(true);
      expect(byKey.has(g)).toBe(true);
    }
  });

  it('checks custom metadata against a meta group of the channel attachment type', async () => {
    const groups = `/organizations/${h.org}/meta-groups`;
    const group = (await h.engine.api('POST', groups, { headers: h.admin, body: {
      attachment: META_GROUP_ATTACHMENTS[2].guid, name: 'Channel facts', fields: [{ name: 'topic', type: 'enum', required: true, additionalData: { enumOptions: ['news', 'sport'] } }],
    } })).body.guid as string;
    const videoGroup = (await h.engine.api('POST', groups, { headers: h.admin, body: { attachment: META_GROUP_ATTACHMENTS[0].guid, name: 'Video', fields: [] } })).body.guid as string;
    const before = await h.list('/broker/channels');
    for (const body of [{ ...external, selectedMetaGroupGuid: group, meta: { topic: 'film' } }, { ...external, selectedMetaGroupGuid: group, meta: {} },
      { ...external, selectedMetaGroupGuid: group, meta: { topic: 'news', extra: 1 } }, { ...external, selectedMetaGroupGuid: videoGroup, meta: {} }]) {
      const answer = await create(body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.code).toBe('VALIDATION_FAILED');
    }
    expect(await h.list('/broker/channels')).toEqual(before);
    const ok = await create({ ...external, selectedMetaGroupGuid: group, meta: { topic: 'sport' } });
    expect((await get(ok.body.guid)).body.data).toMatchObject({ selectedMetaGroupGuid: group, meta: { topic: 'sport' } });
  });
}); });
