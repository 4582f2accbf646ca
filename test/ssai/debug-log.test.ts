// Issue 31 item 8 through the real proxy: a session started with ads.debug=1 (or a session body's debug) keeps a log
// of its origin fetches, ad server requests with their raw answers, and decisions with their reasons, readable by the
// configuration's organization at GET /v1/debug/{guid}/{session}; sessions without debug have none.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BREAK_START, CLIP_SEGMENTS, SEGMENT_SECONDS } from '../../fixtures/origin-server.js';
import { scanMediaPlaylist, scanMultivariantPlaylist } from '../../media/playlist-scanner.js';
import { INTERSTITIAL_CLASS } from '../../ssai/stitch/interstitials.js';
import type { DebugEntry } from '../../ssai/store/debug-log.js';
import { createOrganization } from '../../src/organizations/organization.store.js';
import { deleteRedisPrefix, REDIS_URL, redisAvailable, testRedisPrefix } from '../helpers/redis.js';
import { startEngineWith, startSsai, variantUrls, type SsaiHarness } from './setup.js';

type Log = { status: boolean; guid: string; session: string; entries: DebugEntry[] };
const ofKind = <K extends DebugEntry['kind']>(log: Log, kind: K) => log.entries.filter((e): e is Extract<DebugEntry, { kind: K }> => e.kind === kind);

async function metric(h: SsaiHarness, name: string, labels: string): Promise<number> {
  const text = await h.engine.ctx.metrics.registry.metrics();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('the debug log of a session', () => {
  let h: SsaiHarness;
  let guid: string;
  let cycle = 0;

  beforeAll(async () => {
    h = await startSsai({ origin: { cueForm: 'daterange' } });
    guid = await h.configure('/vast4?sid=[session.id]');
  }, 120_000);
  afterAll(async () => h?.close());

  /** A break in the window of the next clip (each test its own break: decisions are per session anyway). */
  const showBreak = () => { cycle++; h.origin.position = (cycle * CLIP_SEGMENTS + BREAK_START + 6) * SEGMENT_SECONDS; };

  /** A new session's id and its first video playlist URL. */
  async function session(g: string, query: string): Promise<{ sid: string; video: string }> {
    const master = await h.get(`/v1/master/${g}/live/master.m3u8?${query}`);
    expect(master.status, master.text).toBe(200);
    const video = variantUrls(master.text).find((u) => !master.text.includes(`URI="${u}"`))!;
    return { sid: video.split('/')[4]!, video };
  }

  const readLog = async (g: string, sid: string, headers: Record<string, string> = h.auth) => {
    const r = await h.get(`/v1/debug/${g}/${sid}`, { headers });
    return { status: r.status, body: JSON.parse(r.text) as Log & { code?: string; description?: string } };
  };

  it('shows the origin fetches, the filled ad server URL with its raw VAST, and a filled decision', async () => {
    showBreak();
    const before = await metric(h, 'ssai_debug_entries_total', 'kind="decision"');
    const s = await session(guid, 'ads.debug=1');
    const media = await h.get(s.video);
    expect(media.status).toBe(200);
    const { status, body } = await readLog(guid, s.sid);
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ status: true, guid, session: s.sid });
    expect(ofKind(body, 'session')).toEqual([expect.objectContaining({ mode: 'stitched', origin: `${h.origin.url}/live/master.m3u8` })]);
    const origins = ofKind(body, 'origin');
    expect(origins.map((o) => o.url)).toEqual(expect.arrayContaining([`${h.origin.url}/live/master.m3u8`]));
    expect(origins.length).toBeGreaterThanOrEqual(2);
    for (const o of origins) {
      expect(o.status).toBe(200);
      expect(o.bytes).toBeGreaterThan(0);
      expect(o.ms).toBeGreaterThanOrEqual(0);
      expect(o).not.toHaveProperty('text');
    }
    const [request, ...more] = ofKind(body, 'ad-request');
    expect(more).toEqual([]);
    // the URL as sent: [session.id] filled in
    expect(request!.url).toBe(`${h.vast.url}/vast4?sid=${s.sid}`);
    expect(request!.status).toBe(200);
    expect(request!.answer).toMatch(/^<\?xml[\s\S]*<VAST version="4.0">[\s\S]*<\/VAST>$/);
    expect(request!.truncated).toBeUndefined();
    const [decision] = ofKind(body, 'decision');
    expect(decision).toMatchObject({ availId: request!.availId, outcome: 'filled' });
    expect(decision!.reason).toBeUndefined();
    expect((decision!.details as { ads: Array<{ adId: string }> }).ads.map((a) => a.adId)).toEqual(['ad-a', 'ad-b']);
    expect(await metric(h, 'ssai_debug_entries_total', 'kind="decision"')).toBe(before + 1);
  }, 120_000);

  it('gives the reason of a decision whose ad server failed', async () => {
    showBreak();
    const failing = await h.configure('/error');
    const s = await session(failing, 'ads.debug=true');
    expect((await h.get(s.video)).status).toBe(200);
    const { body } = await readLog(failing, s.sid);
    const [request] = ofKind(body, 'ad-request');
    expect(request).toMatchObject({ url: `${h.vast.url}/error`, status: 500 });
    expect(request!.error).toMatch(/^http: ad server answered 500/);
    const [decision] = ofKind(body, 'decision');
    expect(decision).toMatchObject({ outcome: 'content', reason: 'ad-server-error' });
    expect((decision!.details as { error: string }).error).toContain('500');
  }, 60_000);

  it('turns the log on from a session body too, and keeps none for a session without debug', async () => {
    const made = await h.get(`/v1/session/${guid}/live/master.m3u8`, { method: 'POST', body: JSON.stringify({ debug: true }) });
    expect(made.status, made.text).toBe(200);
    const sid = new URL(JSON.parse(made.text).manifestUrl as string, h.engine.url).searchParams.get('sessionId')!;
    expect((await h.get(JSON.parse(made.text).manifestUrl as string)).status).toBe(200);
    expect((await readLog(guid, sid)).status).toBe(200);
    for (const query of ['', 'ads.debug=0', 'ads.debug=false']) {
      const plain = await session(guid, query);
      expect((await h.get(plain.video)).status).toBe(200);
      const { status, body } = await readLog(guid, plain.sid);
      expect(status).toBe(404);
      expect(body.code).toBe('DEBUG_LOG_NOT_FOUND');
    }
    expect((await readLog(guid, 'no-such-session')).status).toBe(404);
  });

  it('refuses a debug flag that is not 1, true, 0 or false with 400 naming the parameter', async () => {
    for (const bad of ['yes', '2', '']) {
      const r = await h.get(`/v1/master/${guid}/live/master.m3u8?ads.debug=${bad}`);
      expect(r.status, bad).toBe(400);
      expect(JSON.parse(r.text)).toMatchObject({ status: false, code: 'BAD_DEBUG_FLAG', description: expect.stringContaining('ads.debug') });
    }
    const body = await h.get(`/v1/session/${guid}/live/master.m3u8`, { method: 'POST', body: JSON.stringify({ debug: 'maybe' }) });
    expect(body.status).toBe(400);
    expect(JSON.parse(body.text)).toMatchObject({ code: 'BAD_DEBUG_FLAG', description: expect.stringContaining('debug') });
  });

  it("answers 401 without credentials and 404 for another organization's configuration", async () => {
    const s = await session(guid, 'ads.debug=1');
    const none = await readLog(guid, s.sid, {});
    expect(none.status).toBe(401);
    expect(none.body.code).toBe('UNAUTHENTICATED');
    const forged = await readLog(guid, s.sid, { Authorization: 'not-a-token' });
    expect(forged.status).toBe(401);
    expect(forged.body.code).toBe('INVALID_TOKEN');
    // An API key of the organization reads it as an ID token does.
    const created = await h.engine.api('POST', '/broker/api-keys', { headers: h.auth, body: { name: 'debug-reader', active: true } });
    const key = (await h.engine.api('GET', new URL(created.body.url as string).pathname, { headers: h.auth })).body.data.value as string;
    expect((await readLog(guid, s.sid, { 'X-Api-Key': key })).status).toBe(200);
    // The same stream under a configuration of another organization: its debug session is not this caller's to read.
    const db = h.engine.ctx.store.db;
    const other = await db.transaction().execute((trx) => createOrganization(trx, 'Other', false, Date.now()));
    const row = await db.selectFrom('adinserts').selectAll().where('id', '=', guid).executeTakeFirstOrThrow();
    const foreign = '11111111-1111-4111-8111-111111111111';
    await db.insertInto('adinserts').values({ ...row, id: foreign, organization_id: other }).execute();
    const theirs = await session(foreign, 'ads.debug=1');
    const read = await readLog(foreign, theirs.sid);
    expect(read.status).toBe(404);
    expect(read.body.code).toBe('DEBUG_LOG_NOT_FOUND');
    // nor is this configuration's log readable under the other's guid
    expect((await readLog(foreign, s.sid)).status).toBe(404);
  });

  it('logs the decision a guided session\'s asset list answers', async () => {
    showBreak();
    const master = await h.get(`/v1/master/${guid}/live/master.m3u8?ads.mode=guided&ads.debug=1`);
    expect(master.status).toBe(200);
    const video = scanMultivariantPlaylist(master.text).playlist!.variants[0]!.uri;
    const sid = video.split('/')[4]!;
    const text = (await h.get(video)).text;
    const pl = scanMediaPlaylist(text).playlist!;
    const tag = [...pl.header, ...pl.segments.flatMap((x) => x.tags)].find((t) => t.name === 'EXT-X-DATERANGE' && t.value.includes(INTERSTITIAL_CLASS))!;
    const id = /ID="([^"]+)"/.exec(tag.value)![1]!;
    const list = /X-ASSET-LIST="([^"]+)"/.exec(tag.value)![1]!;
    const assets = await h.get(new URL(list, `${h.engine.url}${video}`).href);
    expect(assets.status, assets.text).toBe(200);
    const { body } = await readLog(guid, sid);
    expect(ofKind(body, 'session')[0]!.mode).toBe('guided');
    expect(ofKind(body, 'ad-request').map((r) => r.availId)).toContain(id);
    expect(ofKind(body, 'decision')).toEqual([expect.objectContaining({ availId: id, outcome: 'filled' })]);
  }, 60_000);
});

describe('the debug log of a late decision', () => {
  let h: SsaiHarness;
  beforeAll(async () => { h = await startSsai({ engine: await startEngineWith({ decisionDeadlineMs: 300 }), origin: { cueForm: 'daterange' } }); }, 60_000);
  afterAll(async () => { await h?.close(); await h?.engine.close(); });

  it('says the break played its content because the deadline passed, then that the decision landed too late', async () => {
    const guid = await h.configure('/vast4?delayMs=1500');
    // The break starts two segments into the window: too early to end the playlist before it, so it is waited for.
    h.origin.position = (CLIP_SEGMENTS + BREAK_START + 4) * SEGMENT_SECONDS;
    const master = await h.get(`/v1/master/${guid}/live/master.m3u8?ads.debug=1`);
    const video = variantUrls(master.text).find((u) => !master.text.includes(`URI="${u}"`))!;
    expect((await h.get(video)).text).not.toContain('/v1/segment/');
    const read = async () => JSON.parse((await h.get(`/v1/debug/${guid}/${video.split('/')[4]}`, { headers: h.auth })).text) as Log;
    let log = await read();
    expect(ofKind(log, 'decision')).toEqual([expect.objectContaining({ outcome: 'content', reason: 'late' })]);
    // the ad server answers 1.5 s later: its decision is logged as dropped
    for (let i = 0; i < 50 && ofKind(log, 'decision').length < 2; i++) { await new Promise((r) => setTimeout(r, 100)); log = await read(); }
    const [, landed] = ofKind(log, 'decision');
    expect(landed).toMatchObject({ outcome: 'content', reason: 'late', details: { dropped: { outcome: 'filled' } } });
    expect(ofKind(log, 'ad-request')).toEqual([expect.objectContaining({ status: 200, answer: expect.stringContaining('<VAST') })]);
  }, 60_000);
});

describe('the debug log in Redis', () => {
  it('is written by one instance and read by another', async (ctx) => {
    if (!(await redisAvailable())) return ctx.skip();
    const prefix = testRedisPrefix('debug-log');
    const env = { REDIS_URL, REDIS_PREFIX: prefix };
    const e1 = await startEngineWith({ env });
    const e2 = await startEngineWith({ env });
    try {
      const one = await startSsai({ engine: e1, origin: { cueForm: 'daterange' } });
      const guid = await one.configure('/vast4');
      one.origin.position = (CLIP_SEGMENTS + BREAK_START + 6) * SEGMENT_SECONDS;
      const master = await one.get(`/v1/master/${guid}/live/master.m3u8?ads.debug=1`);
      const video = variantUrls(master.text).find((u) => !master.text.includes(`URI="${u}"`))!;
      expect((await one.get(video)).status).toBe(200);
      // Each engine has its own SQLite (so its own organization and signing key): the row is copied to the second
      // engine's organization, whose token reads the log the first engine wrote into Redis.
      const row = await e1.ctx.store.db.selectFrom('adinserts').selectAll().where('id', '=', guid).executeTakeFirstOrThrow();
      await e2.ctx.store.db.insertInto('adinserts').values({ ...row, organization_id: e2.defaultOrganizationId }).execute();
      const auth = { Authorization: (await e2.login()).IdToken };
      const r = await fetch(`${e2.url}/v1/debug/${guid}/${video.split('/')[4]}`, { headers: auth });
      expect(r.status).toBe(200);
      const log = (await r.json()) as Log;
      expect(ofKind(log, 'decision')).toEqual([expect.objectContaining({ outcome: 'filled' })]);
      expect(ofKind(log, 'ad-request')[0]!.answer).toContain('<VAST');
      await one.close();
    } finally {
      await e1.close();
      await e2.close();
      await deleteRedisPrefix(prefix);
    }
  }, 120_000);
});
