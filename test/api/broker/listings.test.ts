// Issue 15 part 2: listings (spec 2.9, 4.4): contiguous batches replace a range atomically; list and clear a range.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, postgresAvailable } from '../../helpers/engine.js';
import { startBroker, storedVod, type BrokerHarness } from './broker-helpers.js';

const postgres = await postgresAvailable();

const T = 1_800_000_000;

describe.each(DIALECTS)('broker listings on %s', (dialect) => { describe.skipIf(dialect === 'postgres' && !postgres)('', () => {
  let h: BrokerHarness;
  let channel: string;
  let playlist: string;
  let vod: string;
  let pending: string;

  beforeAll(async () => {
    h = await startBroker({ dialect });
    vod = await storedVod(h, 30);
    pending = await storedVod(h, 30, { status: 'created' });
    playlist = (await h.engine.api('POST', '/broker/playlists', { headers: h.admin, body: { name: 'p', sources: [{ guid: vod, type: 'source' }] } })).body.guid;
    channel = (await h.engine.api('POST', '/broker/channels', { headers: h.admin, body: { name: 'Linear', description: '', active: 1, type: 'virtual', hasAds: 0 } })).body.guid;
  });
  afterAll(async () => h?.engine.close());

  const post = (body: unknown, headers = h.admin) => h.engine.api('POST', '/broker/listings/multiple', { headers, body });
  const list = async (start = T - 100_000, end = T + 100_000) =>
    (await h.engine.api('GET', `/broker/listings?channel=${channel}&start=${start}&end=${end}`, { headers: h.admin })).body.data as Array<Record<string, unknown>>;
  const spans = async () => (await list()).map((l) => [l.start, l.end, l.title]);

  it('stores a contiguous batch, lists it by range, and a later batch replaces only its range', async () => {
    const answer = await post({ channel, start: T, end: T + 3600, listings: [
      { start: T, end: T + 1200, title: 'one', playlist, color: '#f00' },
      { start: T + 1200, end: T + 2400, title: 'two', vod, description: 'a film' },
      { start: T + 2400, end: T + 3600, title: 'three' },
    ] });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ status: true, data: 'Item was created successfully' });
    expect(await spans()).toEqual([[T, T + 1200, 'one'], [T + 1200, T + 2400, 'two'], [T + 2400, T + 3600, 'three']]);
    expect((await list())[0]).toMatchObject({ channel, playlist, color: '#f00' });
    expect((await list())[1]).toMatchObject({ vod, description: 'a film' });
    expect((await list(T + 1300, T + 1400)).map((l) => l.title)).toEqual(['two']);

    // [T+600, T+1800) cuts into "one" and "two": they are trimmed to the range, not dropped.
    const replace = await post({ channel, start: T + 600, end: T + 1800, listings: [{ start: T + 600, end: T + 1800, title: 'news' }] });
    expect(replace.status).toBe(200);
    expect(await spans()).toEqual([[T, T + 600, 'one'], [T + 600, T + 1800, 'news'], [T + 1800, T + 2400, 'two'], [T + 2400, T + 3600, 'three']]);

    const cleared = await h.engine.api('DELETE', `/broker/listings?channel=${channel}&start=${T + 3000}&end=${T + 3300}`, { headers: h.admin });
    expect(cleared.body).toMatchObject({ status: true, data: 'Item was deleted successfully' });
    expect(await spans()).toEqual([[T, T + 600, 'one'], [T + 600, T + 1800, 'news'], [T + 1800, T + 2400, 'two'], [T + 2400, T + 3000, 'three'], [T + 3300, T + 3600, 'three']]);
  });

  describe('refuses bad batches with their code and changes nothing', () => {
    const one = (extra: Record<string, unknown> = {}) => ({ start: T, end: T + 60, title: 'x', ...extra });
    const cases: Array<[string, () => Record<string, unknown>, number, string]> = [
      ['a gap between listings', () => ({ channel, start: T, end: T + 120, listings: [one(), { start: T + 70, end: T + 120, title: 'y' }] }), 400, 'LISTINGS_NOT_CONTIGUOUS'],
      ['overlapping listings', () => ({ channel, start: T, end: T + 120, listings: [one(), { start: T + 50, end: T + 120, title: 'y' }] }), 400, 'LISTINGS_NOT_CONTIGUOUS'],
      ['a first start other than the range start', () => ({ channel, start: T - 10, end: T + 60, listings: [one()] }), 400, 'LISTINGS_NOT_CONTIGUOUS'],
      ['a last end other than the range end', () => ({ channel, start: T, end: T + 90, listings: [one()] }), 400, 'LISTINGS_NOT_CONTIGUOUS'],
      ['a listing ending before it starts', () => ({ channel, start: T, end: T + 60, listings: [one({ start: T + 60, end: T })] }), 400, 'VALIDATION_FAILED'],
      ['a range ending before it starts', () => ({ channel, start: T + 60, end: T, listings: [one()] }), 400, 'VALIDATION_FAILED'],
      ['a fractional timestamp', () => ({ channel, start: T, end: T + 60, listings: [one({ end: T + 60.5 })] }), 400, 'VALIDATION_FAILED'],
      ['a timestamp as text', () => ({ channel, start: 'tomorrow', end: T + 60, listings: [one()] }), 400, 'VALIDATION_FAILED'],
      ['no listings', () => ({ channel, start: T, end: T + 60, listings: [] }), 400, 'VALIDATION_FAILED'],
      ['a listing without title', () => ({ channel, start: T, end: T + 60, listings: [one({ title: undefined })] }), 400, 'VALIDATION_FAILED'],
      ['a playlist and a vod at once', () => ({ channel, start: T, end: T + 60, listings: [one({ playlist, vod })] }), 400, 'VALIDATION_FAILED'],
      ['an unknown playlist (after a good listing)', () => ({ channel, start: T, end: T + 120, listings: [one({ playlist }), { start: T + 60, end: T + 120, title: 'y', playlist: 'nope' }] }), 400, 'UNKNOWN_REFERENCE'],
      ['an unknown vod', () => ({ channel, start: T, end: T + 60, listings: [one({ vod: 'nope' })] }), 400, 'UNKNOWN_REFERENCE'],
      ['a vod not encoded yet', () => ({ channel, start: T, end: T + 60, listings: [one({ vod: pending })] }), 400, 'SOURCE_NOT_PLAYABLE'],
      ['another channel in a listing', () => ({ channel, start: T, end: T + 60, listings: [one({ channel: 'other' })] }), 400, 'LISTINGS_NOT_CONTIGUOUS'],
      ['an unknown channel', () => ({ channel: '00000000-0000-4000-8000-000000000000', start: T, end: T + 60, listings: [one()] }), 404, 'NOT_FOUND'],
    ];
    for (const [what, body, status, code] of cases) {
      it(`${what} → ${status} ${code}`, async () => {
        const before = await list();
        const answer = await post(body());
        expect(answer.status).toBe(status);
        expect(answer.body).toMatchObject({ status: false, code });
        expect(await list()).toEqual(before);
      });
    }
  });

  it("hides a restricted channel's listings from its reader (404) and refuses long ranges", async () => {
    const viewer = await h.user('editor', 'rita');
    const hidden = (await h.engine.api('POST', '/broker/channels', { headers: h.admin, body: { name: 'Hidden', description: '', active: 1, type: 'virtual', hasAds: 0, restrictedFor: [viewer.guid] } })).body.guid;
    const body = { channel: hidden, start: T, end: T + 60, listings: [{ start: T, end: T + 60, title: 'x' }] };
    expect((await post(body, viewer.auth)).status).toBe(404);
    expect((await post(body)).status).toBe(200);
    expect((await h.engine.api('GET', `/broker/listings?channel=${hidden}&start=${T}&end=${T + 60}`, { headers: viewer.auth })).status).toBe(404);
    const long = await h.engine.api('GET', `/broker/listings?channel=${channel}&start=${T}&end=${T + 400 * 86_400}`, { headers: h.admin });
    expect(long.status).toBe(400);
    expect(long.body.code).toBe('RANGE_TOO_LONG');
  });
}); });
