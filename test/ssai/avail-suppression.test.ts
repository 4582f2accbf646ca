// Issue 31 point 2 through the real proxy: avail suppression by mode, value and fill policy, against each viewer's
// live edge (the end of their session's first playlist). A suppressed break asks the ad server nothing and shows the
// origin's content (stitched) or an empty asset list (guided); PARTIAL_AVAIL fills the rest of a break a viewer
// joined; a VOD is not affected.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AD_SECONDS } from '../../fixtures/vast-server.js';
import { BREAK_START, CLIP_SEGMENTS, SEGMENT_SECONDS } from '../../fixtures/origin-server.js';
import { scanMediaPlaylist, scanMultivariantPlaylist } from '../../media/playlist-scanner.js';
import { startSsai, type SsaiHarness } from './setup.js';

type Suppression = { mode: 'OFF' | 'BEHIND_LIVE_EDGE' | 'AFTER_LIVE_EDGE'; value: string; fill_policy: 'PARTIAL_AVAIL' | 'FULL_AVAIL_ONLY' };

/** The first segment of the break of loop `loop` of the origin's clip. */
const breakOf = (loop: number): number => loop * CLIP_SEGMENTS + BREAK_START;
/** The origin position whose window ends with segment `last`. */
const endingWith = (last: number): number => (last + 1) * SEGMENT_SECONDS;

describe('avail suppression', () => {
  let h: SsaiHarness;

  beforeAll(async () => {
    h = await startSsai({ origin: { cueForm: 'cue-out' } });
  }, 120_000);
  afterAll(async () => h?.close());

  /** A configuration asking /vast4 (ads of 6 s and 4 s) with its own tag, so its requests can be counted. */
  async function configure(tag: string, suppression: Suppression): Promise<string> {
    const created = await h.engine.api('POST', '/broker/adinserts', {
      headers: h.auth,
      body: { name: tag, type: 'live', ad_server: `${h.vast.url}/vast4?t=${tag}&dur=[avail.duration]`, source_url: `${h.origin.url}/`, avail_suppression: suppression },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    return created.body.guid as string;
  }

  const requests = (tag: string) => h.vast.requests.filter((r) => r.query.get('t') === tag);

  /** A new session's first video playlist URL (its live edge is fixed by the first playlist it gets). */
  async function session(guid: string, source = 'live/master.m3u8', query = ''): Promise<string> {
    const master = await h.get(`/v1/master/${guid}/${source}${query}`);
    expect(master.status, master.text).toBe(200);
    return scanMultivariantPlaylist(master.text).playlist!.variants[0]!.uri;
  }

  async function playlist(url: string): Promise<{ text: string; segments: Array<{ uri: string; duration: number }> }> {
    const got = await h.get(url);
    expect(got.status, got.text).toBe(200);
    return { text: got.text, segments: scanMediaPlaylist(got.text).playlist!.segments };
  }

  const adSegments = <S extends { uri: string }>(segments: S[]): S[] => segments.filter((s) => s.uri.startsWith('/v1/segment/'));

  /** The asset list of the one interstitial of a guided playlist. */
  async function assetList(url: string): Promise<Array<{ DURATION: number }>> {
    const { text } = await playlist(url);
    const list = /X-ASSET-LIST="([^"]+)"/.exec(text)?.[1];
    expect(list, text).toBeDefined();
    const got = await h.get(new URL(list!, `${h.engine.url}${url}`).toString());
    expect(got.status, got.text).toBe(200);
    return (JSON.parse(got.text) as { ASSETS: Array<{ DURATION: number }> }).ASSETS;
  }

  describe.each(['BEHIND_LIVE_EDGE', 'AFTER_LIVE_EDGE'] as const)('%s 00:00:00, FULL_AVAIL_ONLY', (mode) => {
    it('asks nothing for the break a viewer joins in, shows its content, and fills the next break', async () => {
      const tag = `full-${mode}`;
      const guid = await configure(tag, { mode, value: '00:00:00', fill_policy: 'FULL_AVAIL_ONLY' });
      // joined 4 s into loop 30's break
      h.origin.position = endingWith(breakOf(30) + 1);
      const url = await session(guid);
      const first = await playlist(url);
      expect(adSegments(first.segments)).toEqual([]);
      expect(first.text).toContain('#EXT-X-CUE-OUT'); // the origin's break is there, as content
      expect(requests(tag)).toHaveLength(0);
      // the session's decision stands on a reload
      expect(adSegments((await playlist(url)).segments)).toEqual([]);
      expect(requests(tag)).toHaveLength(0);
      // the next break starts after the viewer's live edge: filled
      h.origin.position = endingWith(breakOf(31) + 5);
      const next = await playlist(url);
      expect(adSegments(next.segments).length).toBeGreaterThan(0);
      expect(requests(tag)).toHaveLength(1);
    }, 180_000);
  });

  it('BEHIND_LIVE_EDGE 00:00:30: fills only the breaks of the lookback window less than 30 s behind the live edge', async () => {
    const tag = 'behind-30';
    const guid = await configure(tag, { mode: 'BEHIND_LIVE_EDGE', value: '00:00:30', fill_policy: 'FULL_AVAIL_ONLY' });
    h.origin.windowSegments = 30;
    try {
      // three breaks in the window, starting 52 s, 32 s and 12 s behind its end: the first two are the origin's
      h.origin.position = endingWith(breakOf(40) + 5);
      const { text, segments } = await playlist(await session(guid));
      expect(requests(tag)).toHaveLength(1);
      expect(text.match(/CLASS="com\.engine\.ad"/g)).toHaveLength(2); // the two ads of /vast4 in the last break
      const firstAd = segments.findIndex((s) => s.uri.startsWith('/v1/segment/'));
      // everything before the last break is the origin's
      expect(segments.slice(0, firstAd).every((s) => s.uri.startsWith(h.origin.url))).toBe(true);
      expect(firstAd).toBe(segments.length - 6);
    } finally {
      h.origin.windowSegments = 6;
    }
  }, 180_000);

  it('AFTER_LIVE_EDGE 00:00:00, PARTIAL_AVAIL: fills the rest of the break a viewer joins in with ads that fit it', async () => {
    const tag = 'after-partial';
    const guid = await configure(tag, { mode: 'AFTER_LIVE_EDGE', value: '00:00:00', fill_policy: 'PARTIAL_AVAIL' });
    // joined 4 s into the 10 s break of loop 50: 6 s of it are left
    h.origin.position = endingWith(breakOf(50) + 1);
    const url = await session(guid);
    const first = await playlist(url);
    expect(adSegments(first.segments)).toEqual([]); // the rest starts after this window
    expect(requests(tag)).toHaveLength(1);
    expect(requests(tag)[0]!.query.get('dur')).toBe('6');
    // once the rest is in the window: the break's first 4 s are the origin's, then the 6 s ad
    h.origin.position = endingWith(breakOf(50) + 4);
    const later = await playlist(url);
    const ads = adSegments(later.segments);
    expect(ads.reduce((t, s) => t + s.duration, 0)).toBeCloseTo(AD_SECONDS.a, 0);
    const at = later.segments.findIndex((s) => s.uri.startsWith('/v1/segment/'));
    expect(later.segments[at - 1]!.uri).toBe(`${h.origin.url}/media/v0/seg_${String(BREAK_START + 1).padStart(3, '0')}.m4s`);
    expect(later.segments[at - 2]!.uri).toBe(`${h.origin.url}/media/v0/seg_${String(BREAK_START).padStart(3, '0')}.m4s`);
    expect(requests(tag)).toHaveLength(1);
  }, 180_000);

  it('guided: an empty asset list and no request for a break suppressed for the viewer, the rest under PARTIAL_AVAIL', async () => {
    const full = await configure('guided-full', { mode: 'BEHIND_LIVE_EDGE', value: '00:00:00', fill_policy: 'FULL_AVAIL_ONLY' });
    const partial = await configure('guided-partial', { mode: 'AFTER_LIVE_EDGE', value: '00:00:00', fill_policy: 'PARTIAL_AVAIL' });
    h.origin.position = endingWith(breakOf(60) + 1);
    expect(await assetList(await session(full, 'live/master.m3u8', '?ads.mode=guided'))).toEqual([]);
    expect(requests('guided-full')).toHaveLength(0);
    const rest = await assetList(await session(partial, 'live/master.m3u8', '?ads.mode=guided'));
    expect(rest.map((a) => a.DURATION)).toEqual([AD_SECONDS.a]);
    expect(requests('guided-partial')).toHaveLength(1);
    expect(requests('guided-partial')[0]!.query.get('dur')).toBe('6');
  }, 180_000);

  it('leaves a VOD alone', async () => {
    const tag = 'vod';
    const guid = await configure(tag, { mode: 'BEHIND_LIVE_EDGE', value: '00:00:00', fill_policy: 'FULL_AVAIL_ONLY' });
    const { segments } = await playlist(await session(guid, 'vod/master.m3u8'));
    expect(adSegments(segments).length).toBeGreaterThan(0);
    expect(requests(tag)).toHaveLength(1);
  }, 180_000);
});
