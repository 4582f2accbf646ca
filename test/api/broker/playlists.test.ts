// Issue 15 part 3: playlists (spec 2.10, 4.5): durations computed from the sources, ads inside their source.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, postgresAvailable } from '../../helpers/engine.js';
import { startBroker, storedVod, type BrokerHarness } from './broker-helpers.js';

const postgres = await postgresAvailable();

describe.each(DIALECTS)('broker playlists on %s', (dialect) => { describe.skipIf(dialect === 'postgres' && !postgres)('', () => {
  let h: BrokerHarness;
  let a: string;
  let b: string;
  let ad: string;
  let pending: string;

  beforeAll(async () => {
    h = await startBroker({ dialect });
    a = await storedVod(h, 20, { title: 'A' });
    b = await storedVod(h, 12.5, { title: 'B' });
    ad = await storedVod(h, 4, { title: 'Ad' });
    pending = await storedVod(h, 10, { status: 'created' });
  });
  afterAll(async () => h?.engine.close());

  const create = (body: unknown) => h.engine.api('POST', '/broker/playlists', { headers: h.admin, body });

  it('creates, reads with computed durations, lists, updates and deletes', async () => {
    const body = {
      name: 'Evening', title: 'Evening films', description: 'two films', duration: 99999,
      sources: [{ guid: a, type: 'source', ads: [{ start: 10, guid: ad, substitute: 0 }] }, { guid: b, type: 'vod', ads: [{ start: 2, guid: ad, substitute: 1 }] }],
    };
    const created = await create(body);
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ status: true, data: 'Item was created successfully', guid: expect.any(String) });
    const guid = created.body.guid as string;
    const read = (await h.engine.api('GET', `/broker/playlists/${guid}`, { headers: h.admin })).body.data;
    // A inserts a 4 s ad (24 s in all); B's ad replaces 4 s of B (12.5 s in all): 36.5 s, whatever the body said.
    expect(read).toMatchObject({ guid, name: 'Evening', title: 'Evening films', description: 'two films', duration: 36.5 });
    expect(read.sources[0]).toMatchObject({ guid: a, type: 'source', duration: 20, totalDuration: 24, meta: { title: 'A', type: 'source', description: null, imageUrl: null } });
    expect(read.sources[1]).toMatchObject({ guid: b, duration: 12.5, totalDuration: 12.5, ads: [{ start: 2, guid: ad, substitute: 1 }] });
    expect((await h.list('/broker/playlists')).some((p) => (p as { guid: string }).guid === guid)).toBe(true);

    const put = await h.engine.api('PUT', `/broker/playlists/${guid}`, { headers: h.admin, body: { name: 'Late', sources: [{ guid: b, type: 'source' }] } });
    expect(put.body).toEqual({ status: true, data: 'Item was updated successfully' });
    expect((await h.engine.api('GET', `/broker/private/playlists/${guid}`, { headers: h.key })).body.data).toMatchObject({ name: 'Late', duration: 12.5 });
    const del = await h.engine.api('DELETE', `/broker/playlists/${guid}`, { headers: h.admin });
    expect(del.body).toEqual({ status: true, data: 'Item was deleted successfully' });
    expect((await h.engine.api('GET', `/broker/playlists/${guid}`, { headers: h.admin })).status).toBe(404);
  });

  describe('refuses bad input with its code and changes nothing', () => {
    const cases: Array<[string, () => Record<string, unknown>, string, string]> = [
      ['no name', () => ({ sources: [{ guid: a, type: 'source' }] }), 'VALIDATION_FAILED', 'name'],
      ['no sources', () => ({ name: 'x', sources: [] }), 'VALIDATION_FAILED', 'sources'],
      ['a source without type', () => ({ name: 'x', sources: [{ guid: a }] }), 'VALIDATION_FAILED', 'sources.0.type'],
      ['an unknown source', () => ({ name: 'x', sources: [{ guid: 'no-such-vod', type: 'source' }] }), 'UNKNOWN_REFERENCE', 'sources.0.guid'],
      ['a source not encoded yet', () => ({ name: 'x', sources: [{ guid: pending, type: 'source' }] }), 'SOURCE_NOT_PLAYABLE', 'sources.0.guid'],
      ['an unknown ad', () => ({ name: 'x', sources: [{ guid: a, type: 'source', ads: [{ start: 1, guid: 'nope', substitute: 0 }] }] }), 'UNKNOWN_REFERENCE', 'sources.0.ads.0.guid'],
      ['an ad after the end of its source', () => ({ name: 'x', sources: [{ guid: a, type: 'source', ads: [{ start: 20, guid: ad, substitute: 0 }] }] }), 'AD_OUTSIDE_SOURCE', 'sources.0.ads.0.start'],
      ['a substituting ad running past its source', () => ({ name: 'x', sources: [{ guid: b, type: 'source', ads: [{ start: 10, guid: ad, substitute: 1 }] }] }), 'AD_OUTSIDE_SOURCE', 'sources.0.ads.0.start'],
      ['a negative ad start', () => ({ name: 'x', sources: [{ guid: a, type: 'source', ads: [{ start: -1, guid: ad, substitute: 0 }] }] }), 'VALIDATION_FAILED', 'sources.0.ads.0.start'],
    ];
    for (const [what, body, code, field] of cases) {
      it(`${what} → 400 ${code}`, async () => {
        const before = await h.list('/broker/playlists');
        const answer = await create(body());
        expect(answer.status).toBe(400);
        expect(answer.body).toMatchObject({ status: false, code });
        expect(answer.body.fields.map((f: { field: string }) => f.field)).toContain(field);
        expect(await h.list('/broker/playlists')).toEqual(before);
      });
    }

    it('a bad update leaves the playlist as it was', async () => {
      const guid = (await create({ name: 'Keep', sources: [{ guid: a, type: 'source' }] })).body.guid as string;
      const before = (await h.engine.api('GET', `/broker/playlists/${guid}`, { headers: h.admin })).body.data;
      const answer = await h.engine.api('PUT', `/broker/playlists/${guid}`, { headers: h.admin, body: { name: 'Changed', sources: [{ guid: a, type: 'source' }, { guid: 'nope', type: 'source' }] } });
      expect(answer.body.code).toBe('UNKNOWN_REFERENCE');
      expect((await h.engine.api('GET', `/broker/playlists/${guid}`, { headers: h.admin })).body.data).toEqual(before);
    });
  });

  it('refuses to delete a playlist that listings name (409 PLAYLIST_IN_USE)', async () => {
    const playlist = (await create({ name: 'Used', sources: [{ guid: a, type: 'source' }] })).body.guid as string;
    const channel = (await h.engine.api('POST', '/broker/channels', { headers: h.admin, body: { name: 'c', description: '', active: 1, type: 'virtual', hasAds: 0 } })).body.guid;
    const put = await h.engine.api('POST', '/broker/listings/multiple', { headers: h.admin, body: { channel, start: 1000, end: 2000, listings: [{ start: 1000, end: 2000, title: 't', playlist }] } });
    expect(put.status).toBe(200);
    const del = await h.engine.api('DELETE', `/broker/playlists/${playlist}`, { headers: h.admin });
    expect(del.status).toBe(409);
    expect(del.body.code).toBe('PLAYLIST_IN_USE');
    expect((await h.engine.api('GET', `/broker/playlists/${playlist}`, { headers: h.admin })).status).toBe(200);
  });
}); });
