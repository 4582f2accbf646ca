// Issue 19 point 2: in a VOD, VMAP breaks (pre-, mid-, post-roll) and EXT-X-CUE-OUT:0 insert their ads (every content
// segment stays, the duration grows by the ads, PDTs, DATERANGEs and the tracking JSON follow the stitched timeline);
// a VOD CUE-OUT with a duration replaces its span.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BREAK_SECONDS, BREAK_SEGMENTS, BREAK_START, CLIP_SEGMENTS, EPOCH_MS, SEGMENT_SECONDS } from '../../fixtures/origin-server.js';
import { AD_SECONDS } from '../../fixtures/vast-server.js';
import { parseAttributes, scanMediaPlaylist, scanMultivariantPlaylist, type MediaPlaylist } from '../../media/playlist-scanner.js';
import { startSsai, type SsaiHarness } from './setup.js';

const CONTENT_SECONDS = CLIP_SEGMENTS * SEGMENT_SECONDS;
const isAd = (uri: string) => uri.includes('/v1/segment/');

type Stitched = { url: string; kind: 'video' | 'audio'; pl: MediaPlaylist; text: string };

/** Where each break starts on the stitched timeline (seconds) and how long it lasts. */
function breaksOf(pl: MediaPlaylist): Array<{ at: number; seconds: number }> {
  const out: Array<{ at: number; seconds: number }> = [];
  let t = 0;
  let prevAd = false;
  for (const s of pl.segments) {
    const ad = isAd(s.uri);
    if (ad && !prevAd) out.push({ at: t, seconds: 0 });
    if (ad) out.at(-1)!.seconds += s.duration;
    t += s.duration;
    prevAd = ad;
  }
  return out.map((b) => ({ at: Math.round(b.at * 1000) / 1000, seconds: Math.round(b.seconds * 1000) / 1000 }));
}

describe('VOD ad insertion', () => {
  let h: SsaiHarness;
  beforeAll(async () => { h = await startSsai({ origin: { cueForm: 'none' } }); }, 60_000);
  afterAll(async () => h?.close());

  /** Every video and audio media playlist of a new VOD session, asked until its breaks are stitched. */
  async function session(guid: string, breaks: number): Promise<{ lists: Stitched[]; trackingUrl: string }> {
    const made = await h.get(`/v1/session/${guid}/vod/master.m3u8`, { method: 'POST', body: '{}' });
    const { manifestUrl, trackingUrl } = JSON.parse(made.text) as { manifestUrl: string; trackingUrl: string };
    const mv = scanMultivariantPlaylist((await h.get(manifestUrl)).text).playlist!;
    const urls = [...mv.variants.map((v) => ({ url: v.uri, kind: 'video' as const })),
      ...mv.renditions.filter((r) => r.type === 'AUDIO' && r.uri).map((r) => ({ url: r.uri!, kind: 'audio' as const }))];
    const fetchAll = () => Promise.all(urls.map(async ({ url, kind }) => {
      const text = (await h.get(url)).text;
      return { url, kind, text, pl: scanMediaPlaylist(text).playlist! };
    }));
    let lists = await fetchAll();
    // The creatives may still be prepared on the first requests: ask until every break is stitched.
    for (let i = 0; i < 60 && lists.some((l) => breaksOf(l.pl).length < breaks); i++) {
      await new Promise((r) => setTimeout(r, 2000));
      lists = await fetchAll();
    }
    return { lists, trackingUrl };
  }

  /** The breaks are where expected (audio segment sums differ from the ads' lengths by AAC framing: 0.25 s slack). */
  function expectBreaks(l: Stitched, expected: Array<[number, number]>): void {
    const got = breaksOf(l.pl);
    expect(got.length, l.text).toBe(expected.length);
    got.forEach((b, i) => {
      expect(Math.abs(b.at - expected[i]![0]), `break ${i} at ${b.at}\n${l.text}`).toBeLessThan(0.25);
      expect(Math.abs(b.seconds - expected[i]![1]), `break ${i} of ${b.seconds} s\n${l.text}`).toBeLessThan(0.25);
    });
  }

  /**
   * Every content segment of the VOD, in order; the total duration is content + ads; the content's PDTs moved by the
   * ads inserted before them, each ad's PDT and DATERANGE at its place on that timeline.
   */
  function expectInserted(l: Stitched, adSeconds: number): void {
    const content = l.pl.segments.filter((s) => !isAd(s.uri));
    expect(content.map((s) => s.uri.replace(/^.*\//, '')), l.text).toEqual(
      Array.from({ length: CLIP_SEGMENTS }, (_, i) => `seg_${String(i).padStart(3, '0')}.m4s`));
    const total = l.pl.segments.reduce((t, s) => t + s.duration, 0);
    expect(Math.abs(total - (CONTENT_SECONDS + adSeconds)), l.text).toBeLessThan(0.25);
    expect(l.pl.endList).toBe(true);
    let inserted = 0; // whole seconds of ads before the current segment (the fixture's ads last 6 s and 4 s)
    let run = 0;
    let contentBefore = 0;
    for (const s of l.pl.segments) {
      if (isAd(s.uri)) {
        if (run === 0) expect(Math.abs(s.pdtMs! - (EPOCH_MS + (contentBefore * SEGMENT_SECONDS + inserted) * 1000)), `PDT of ${s.uri}\n${l.text}`).toBeLessThan(5);
        run += s.duration;
        const dr = s.tags.find((x) => x.name === 'EXT-X-DATERANGE' && x.value.includes('com.engine.ad'));
        if (dr) expect(Math.abs(Date.parse(parseAttributes(dr.value)['START-DATE']!) - s.pdtMs!)).toBeLessThan(5);
        continue;
      }
      inserted += Math.round(run);
      run = 0;
      const k = Number(/seg_(\d+)/.exec(s.uri)![1]);
      expect(Math.abs(s.pdtMs! - (EPOCH_MS + (k * SEGMENT_SECONDS + inserted) * 1000)), `PDT of ${s.uri}\n${l.text}`).toBeLessThan(5);
      contentBefore = k + 1;
    }
  }

  it('inserts a VMAP pre-roll before the first content segment', async () => {
    const guid = await h.configure('/vmap?breaks=preroll', { type: 'broker' });
    const { lists } = await session(guid, 1);
    for (const l of lists) {
      expectBreaks(l, [[0, AD_SECONDS.a]]);
      expectInserted(l, AD_SECONDS.a);
    }
  }, 240_000);

  it('inserts a VMAP mid-roll at its time offset snapped to a segment boundary', async () => {
    // 00:00:07.1 snaps to the boundary at 8 s (segment 4).
    const guid = await h.configure('/vmap?breaks=midroll-1&mid=00:00:07.100', { type: 'broker' });
    const { lists } = await session(guid, 1);
    for (const l of lists) {
      expectBreaks(l, [[8, AD_SECONDS.a]]);
      expectInserted(l, AD_SECONDS.a);
    }
  }, 240_000);

  it('inserts a VMAP post-roll after the last content segment', async () => {
    const guid = await h.configure('/vmap?breaks=postroll', { type: 'broker' });
    const { lists } = await session(guid, 1);
    for (const l of lists) {
      expectBreaks(l, [[CONTENT_SECONDS, AD_SECONDS.b]]);
      expect(isAd(l.pl.segments.at(-1)!.uri)).toBe(true);
      expectInserted(l, AD_SECONDS.b);
    }
  }, 240_000);

  it('inserts every break of a VMAP, and the tracking JSON places them on the stitched timeline', async () => {
    const guid = await h.configure('/vmap', { type: 'broker' });
    const { lists, trackingUrl } = await session(guid, 4);
    const ads = AD_SECONDS.a + AD_SECONDS.a + (AD_SECONDS.a + AD_SECONDS.b) + AD_SECONDS.b;
    for (const l of lists) {
      // pre-roll at 0; 8 s of content; mid-roll 1; content to 14 s (75 %); mid-roll 2 (ads a and b); content; post-roll
      expectBreaks(l, [[0, 6], [14, 6], [26, 10], [42, 4]]);
      expectInserted(l, ads);
    }
    const tracking = JSON.parse((await h.get(trackingUrl)).text) as { avails: Array<{ availId: string; insert?: boolean; timelineOffsetSeconds: number; startTime: string; duration: number }> };
    const avails = [...tracking.avails].sort((a, b) => a.timelineOffsetSeconds - b.timelineOffsetSeconds);
    expect(avails.map((a) => [a.availId, a.insert, a.timelineOffsetSeconds, a.duration])).toEqual([
      ['vmap-preroll', true, 0, 6], ['vmap-midroll-1', true, 14, 6], ['vmap-midroll-2', true, 26, 10], ['vmap-postroll', true, 42, 4],
    ]);
    for (const a of avails) expect(Date.parse(a.startTime)).toBe(EPOCH_MS + a.timelineOffsetSeconds * 1000);
  }, 240_000);

  it('gives a new session every VMAP break, the post-roll too, in the first media playlist of each rendition', async () => {
    const guid = await h.configure('/vmap', { type: 'broker' });
    await session(guid, 4); // the creatives prepared once for this ladder
    const made = await h.get(`/v1/session/${guid}/vod/master.m3u8`, { method: 'POST', body: '{}' });
    const mv = scanMultivariantPlaylist((await h.get((JSON.parse(made.text) as { manifestUrl: string }).manifestUrl)).text).playlist!;
    // A VOD player reads each media playlist once: the first answer of the first and of the second rendition.
    for (const url of [mv.variants[0]!.uri, mv.variants[1]!.uri]) {
      const text = (await h.get(url)).text;
      const l: Stitched = { url, kind: 'video', text, pl: scanMediaPlaylist(text).playlist! };
      expectBreaks(l, [[0, 6], [14, 6], [26, 10], [42, 4]]);
      expect(isAd(l.pl.segments.at(-1)!.uri), text).toBe(true);
    }
  }, 240_000);

  it('inserts at a VOD EXT-X-CUE-OUT:0 and replaces the span of a VOD EXT-X-CUE-OUT with a duration', async () => {
    h.origin.cueForm = 'cue-out-zero';
    try {
      const guid = await h.configure('/vast4?sid=[session.id]', { type: 'broker' });
      const { lists } = await session(guid, 1);
      for (const l of lists) {
        expectBreaks(l, [[BREAK_START * SEGMENT_SECONDS, AD_SECONDS.a + AD_SECONDS.b]]);
        expectInserted(l, AD_SECONDS.a + AD_SECONDS.b);
        expect(l.text).not.toContain('EXT-X-CUE-OUT');
      }
      h.origin.cueForm = 'cue-out';
      const replaced = await session(guid, 1);
      for (const l of replaced.lists) {
        expectBreaks(l, [[BREAK_START * SEGMENT_SECONDS, BREAK_SECONDS]]);
        const content = l.pl.segments.filter((s) => !isAd(s.uri));
        expect(content.length).toBe(CLIP_SEGMENTS - BREAK_SEGMENTS);
        expect(Math.abs(l.pl.segments.reduce((t, s) => t + s.duration, 0) - CONTENT_SECONDS)).toBeLessThan(0.25);
      }
    } finally {
      h.origin.cueForm = 'none';
    }
  }, 240_000);
});
