import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys, type AvailRecord } from '../../ssai/decide/avail-record.js';
import { checkPlaylist } from '../../ssai/check/playlist-checker.js';
import { oneRecordPerBreak } from '../../ssai/serve/break-places.js';
import { BREAK_START, CLIP_SEGMENTS, SEGMENT_SECONDS } from '../../fixtures/origin-server.js';
import { segmentUris, startEngineWith, startSsai, variantUrls, type SsaiHarness } from './setup.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

async function redisAvailable(): Promise<boolean> {
  const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 1000, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
    return true;
  } catch {
    process.stderr.write(`Redis at ${REDIS_URL} does not answer: the two-engines test is skipped\n`);
    return false;
  } finally {
    client.disconnect();
  }
}

/** ad segment paths without the session-specific prefix, per playlist: what "the same ads" means */
const adsOf = (text: string) => segmentUris(text).filter((u) => u.startsWith('/v1/segment/')).map((u) => u.split('/').slice(5).join('/'));
const creativeMaps = (text: string) => text.split('\n').filter((l) => l.includes('/creatives/')).map((l) => l.replace(/.*\/creatives\/([^/]+)\/.*/, '$1'));

describe('one session, the same ads', () => {
  let h: SsaiHarness;
  let guid: string;

  beforeAll(async () => {
    h = await startSsai({ origin: { cueForm: 'cue-out' } });
    guid = await h.configure('/vast4?sid=[session.id]');
  });
  afterAll(async () => h?.close());

  it('gives the same ads in every rendition and on every reload, and asks the ad server once per avail', async () => {
    h.origin.position = (CLIP_SEGMENTS + BREAK_START + 6) * SEGMENT_SECONDS;
    const master = await h.get(`/v1/master/${guid}/live/master.m3u8`);
    const [v0, v1] = variantUrls(master.text).filter((u) => !master.text.includes(`URI="${u}"`));
    const before = h.vast.requests.length;
    const a = await h.get(v0!);
    const b = await h.get(v1!);
    const again = await h.get(v0!);
    expect(h.vast.requests.length - before).toBe(1);
    expect(adsOf(a.text).length).toBe(5); // the VAST 4 pod: 6 s + 4 s in 2 s segments
    expect(creativeMaps(a.text)).toEqual(creativeMaps(again.text));
    expect(adsOf(a.text).map((p) => p.split('/').slice(0, 2).join('/'))).toEqual(adsOf(b.text).map((p) => p.split('/').slice(0, 2).join('/')));
    expect(again.text).toBe(a.text);
    const tracking = await h.get(`/v1/tracking/${guid}/${v0!.split('/')[4]}`);
    const body = JSON.parse(tracking.text);
    expect(body.avails).toHaveLength(1);
    expect(body.avails[0].ads.map((ad: { adId: string }) => ad.adId)).toEqual(['ad-a', 'ad-b']);
    expect(body.avails[0].ads[1].startOffsetSeconds).toBe(6);
  });

  it('keeps sequences monotonic and conformant over 40 reloads of a moving live window, as past breaks retire', async () => {
    h.origin.position = (CLIP_SEGMENTS + 1) * SEGMENT_SECONDS * 2;
    const master = await h.get(`/v1/master/${guid}/live/master.m3u8`);
    const urls = variantUrls(master.text);
    const sid = urls[0]!.split('/')[4];
    const previous = new Map<string, string>();
    const decisionsBefore = h.vast.requests.length;
    const fetchedSegments = new Set<string>();
    let stitched = 0;
    // 40 segments: four breaks, the first three leave the window and retire (kept as numbering only) on the way; the
    // checker compares each reload with the one before, so a retirement that moved any number would show
    for (let reload = 0; reload < 40; reload++) {
      for (const u of urls) {
        const { text, status } = await h.get(u);
        expect(status).toBe(200);
        const findings = checkPlaylist(text, previous.get(u)).filter((f) => f.severity === 'error');
        expect(findings, `reload ${reload} of ${u}:\n${previous.get(u)}\n----\n${text}`).toEqual([]);
        previous.set(u, text);
        if (text.includes('/v1/segment/') || text.includes('empty.vtt')) stitched++;
        // as a player: each ad segment once (a video segment's redirect fires the beacons, each marked as fired)
        for (const seg of segmentUris(text).filter((x) => x.startsWith('/v1/segment/') && !fetchedSegments.has(x))) {
          fetchedSegments.add(seg);
          expect((await h.get(seg)).status).toBe(302);
        }
      }
      h.origin.advance(SEGMENT_SECONDS);
    }
    expect(stitched).toBeGreaterThan(40);
    // one decision per break, none again once retired; the tracking JSON lists only the breaks not retired
    const decided = h.vast.requests.length - decisionsBefore;
    expect(decided).toBeGreaterThanOrEqual(4);
    const tracking = JSON.parse((await h.get(`/v1/tracking/${guid}/${sid}`)).text) as { avails: Array<{ ads: Array<{ adId: string }> }> };
    expect(tracking.avails.length).toBeGreaterThanOrEqual(1);
    expect(tracking.avails.length).toBeLessThan(decided);
    for (const avail of tracking.avails) expect(avail.ads.every((ad) => ad.adId.startsWith('ad-'))).toBe(true);
    // a retired break's beacons fired, and their marks went with its tracking (they would stay with the session 6 h)
    const { store, beacons } = h.engine.ctx.services.ssai!;
    await beacons.idle();
    const ids = [...new Set(await store.list(keys.availList(sid!)))];
    const records = (await Promise.all(ids.map((id) => store.get<AvailRecord>(keys.avail(sid!, id))))).filter((r) => r !== undefined);
    const retiredIds = records.filter((r) => r.retired).map((r) => r.id);
    expect(retiredIds.length).toBeGreaterThanOrEqual(2);
    expect(h.vast.beacons.get('complete:a') ?? 0).toBeGreaterThanOrEqual(retiredIds.length);
    // a break's fired events are one bit set per viewer (bit ad × 6 + event)
    const marks = (id: string) => store.get<number>(`beacon:${sid}:${id}`);
    for (const id of retiredIds) expect(await marks(id), id).toBeUndefined();
    const live = records.find((r) => !r.retired && fetchedSegments.has([...fetchedSegments].find((s) => s.includes(`/${encodeURIComponent(r.id)}/`)) ?? ''));
    if (live) expect(await marks(live.id)).toBeGreaterThan(0);
  });

  it('decides a break once when its id changes while it is decided (CUE-OUT alone at the edge, then CONT with SCTE-35)', async () => {
    // A CI run: the first reload saw the CUE-OUT as the window's last segment (the break named by its date), the
    // decision took a while, the next reload saw the CONT's SCTE-35 event id and decided the break again; both
    // decisions counted in the numbering and hls.js stopped on "discontinuity sequence mismatch".
    const slow = await h.configure('/vast4?sid=[session.id]&delayMs=1500');
    h.origin.position = (2 * CLIP_SEGMENTS + BREAK_START + 1) * SEGMENT_SECONDS; // the CUE-OUT ends the window
    const master = await h.get(`/v1/master/${slow}/live/master.m3u8`);
    const v0 = variantUrls(master.text).find((u) => !master.text.includes(`URI="${u}"`))!;
    const sid = v0.split('/')[4]!;
    const before = h.vast.requests.length;
    const first = h.get(v0);
    while (h.vast.requests.length === before) await new Promise((r) => setTimeout(r, 20)); // the decision is under way
    h.origin.advance(SEGMENT_SECONDS); // the CONT with its SCTE-35 event id is listed now
    const second = h.get(v0);
    const [a, b] = await Promise.all([first, second]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(h.vast.requests.length - before).toBe(1);
    expect(new Set(await h.engine.ctx.services.ssai!.store.list(keys.availList(sid))).size).toBe(1);
    // and the numbering holds through the break: every reload conforms to the one before
    let previous = b.text;
    for (let reload = 0; reload < 8; reload++) {
      h.origin.advance(SEGMENT_SECONDS);
      const { text } = await h.get(v0);
      expect(checkPlaylist(text, previous).filter((f) => f.severity === 'error'), `reload ${reload}:\n${previous}\n----\n${text}`).toEqual([]);
      previous = text;
    }
  });

  it('places one record per break when two instances decided it under two ids (the first in the session list stands)', () => {
    const record = (id: string, index: number, startPdtMs: number): AvailRecord => ({
      id, index, startSegmentIndex: 24 + index, endSegmentIndex: 29, duration: 10, slotDuration: 2, startPdtMs, ads: [], skipped: [],
    });
    const byDate = record('pdt-1767571248', 0, 1_767_571_248_000);
    const byEvent = record('scte-1002', 1, 1_767_571_248_400); // within half a slot: the same break
    const next = record('scte-1003', 2, 1_767_571_268_000);
    expect(oneRecordPerBreak([byEvent, byDate, next], 2)).toEqual([byDate, next]);
    expect(oneRecordPerBreak([byDate, byEvent, next], 2)).toEqual([byDate, next]);
    const apart = [byDate, record('scte-1004', 1, 1_767_571_249_200)]; // over half a slot away: another break
    expect(oneRecordPerBreak(apart, 2)).toBe(apart);
  });

  it('two engines on one Redis give one session the same ads', async (ctx) => {
    if (!(await redisAvailable())) return ctx.skip();
    const env = { REDIS_URL };
    const e1 = await startEngineWith({ env });
    const e2 = await startEngineWith({ env });
    try {
      const one = await startSsai({ engine: e1, origin: { cueForm: 'daterange' } });
      // Each engine has its own SQLite here, so the configuration row is copied; sessions and decisions travel
      // through Redis keyed by session id.
      const g1 = await one.configure('/vast4');
      const master = await one.get(`/v1/master/${g1}/live/master.m3u8`);
      one.origin.position = (CLIP_SEGMENTS + BREAK_START + 6) * SEGMENT_SECONDS;
      const v0 = variantUrls(master.text).find((u) => !master.text.includes(`URI="${u}"`))!;
      const row = await e1.ctx.store.db.selectFrom('adinserts').selectAll().where('id', '=', g1).executeTakeFirstOrThrow();
      await e2.ctx.store.db.insertInto('adinserts').values({ ...row, organization_id: e2.defaultOrganizationId }).execute();
      const [r1, r2] = await Promise.all([fetch(`${e1.url}${v0}`).then((r) => r.text()), fetch(`${e2.url}${v0}`).then((r) => r.text())]);
      expect(adsOf(r1).length).toBeGreaterThan(0);
      expect(r2).toBe(r1);
      expect(one.vast.requests.length).toBe(1);
      await one.close();
    } finally {
      await e1.close();
      await e2.close();
    }
  });

  it('two engines on one Redis date a guided live stream without program date-times alike', async (ctx) => {
    if (!(await redisAvailable())) return ctx.skip();
    const env = { REDIS_URL };
    const e1 = await startEngineWith({ env });
    const e2 = await startEngineWith({ env });
    try {
      const one = await startSsai({ engine: e1, origin: { cueForm: 'cue-out' } });
      one.origin.programDateTime = false;
      const g1 = await one.configure('/vast4');
      const row = await e1.ctx.store.db.selectFrom('adinserts').selectAll().where('id', '=', g1).executeTakeFirstOrThrow();
      await e2.ctx.store.db.insertInto('adinserts').values({ ...row, organization_id: e2.defaultOrganizationId }).execute();
      one.origin.position = (3 * CLIP_SEGMENTS + BREAK_START + 3) * SEGMENT_SECONDS;
      // this stream is new to both processes: each would date it from its own clock at first sight
      const master = await one.get(`/v1/master/${g1}/live/master.m3u8?ads.mode=guided&stream=${Date.now()}`);
      const v0 = variantUrls(master.text).find((u) => !master.text.includes(`URI="${u}"`))!;
      const r1 = await (await fetch(`${e1.url}${v0}`)).text();
      await new Promise((r) => setTimeout(r, 300));
      const r2 = await (await fetch(`${e2.url}${v0}`)).text();
      expect(r1).toContain('#EXT-X-PROGRAM-DATE-TIME:');
      expect(r1).toContain('com.apple.hls.interstitial');
      expect(r2).toBe(r1);
      // and the window moved on: both still agree, and the segments both listed keep their dates
      one.origin.position += 2 * SEGMENT_SECONDS;
      const [m1, m2] = [await (await fetch(`${e1.url}${v0}`)).text(), await (await fetch(`${e2.url}${v0}`)).text()];
      expect(m2).toBe(m1);
      await one.close();
    } finally {
      await e1.close();
      await e2.close();
    }
  });
});
