// Issue 26 §4: an ad-insertion configuration's type (live, broker) names the service it belongs to; whether a stream is
// live or VOD is read from its playlist (EXT-X-ENDLIST or EXT-X-PLAYLIST-TYPE:VOD). Both types serve both kinds, and
// the VOD rules (VMAP breaks inserted, every content segment kept) follow the playlist.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BREAK_START, CLIP_SEGMENTS, SEGMENT_SECONDS } from '../../fixtures/origin-server.js';
import { AD_SECONDS } from '../../fixtures/vast-server.js';
import { checkPlaylist } from '../../ssai/check/playlist-checker.js';
import { scanMediaPlaylist, scanMultivariantPlaylist } from '../../media/playlist-scanner.js';
import { segmentUris, startSsai, variantUrls, type SsaiHarness } from './setup.js';

const isAd = (uri: string) => uri.startsWith('/v1/segment/');

describe('live or VOD is read from the playlist, whatever the configuration type', () => {
  let h: SsaiHarness;
  beforeAll(async () => { h = await startSsai(); }, 60_000);
  beforeEach(() => { h.origin.cueForm = 'daterange'; });
  afterAll(async () => h?.close());

  /** The first video media playlist of a new session, asked until it has ad segments (creatives may be in the making). */
  async function videoPlaylist(guid: string, path: string): Promise<string> {
    const master = await h.get(`/v1/master/${guid}/${path}`);
    expect(master.status, master.text).toBe(200);
    const url = scanMultivariantPlaylist(master.text).playlist!.variants[0]!.uri;
    let text = '';
    for (let i = 0; i < 60; i++) {
      const media = await h.get(url);
      expect(media.status, media.text).toBe(200);
      text = media.text;
      if (segmentUris(text).some(isAd)) break;
      await new Promise((r) => setTimeout(r, 2000));
    }
    return text;
  }

  it('a broker configuration stitches the break of a live stream', async () => {
    h.origin.position = (CLIP_SEGMENTS + BREAK_START + 6) * SEGMENT_SECONDS;
    const guid = await h.configure('/vast3', { type: 'broker' });
    const text = await videoPlaylist(guid, 'live/master.m3u8');
    const uris = segmentUris(text);
    expect(uris.filter(isAd).length, text).toBeGreaterThan(0);
    expect(uris.some((u) => u.startsWith(h.origin.url))).toBe(true);
    expect(text).not.toContain('#EXT-X-ENDLIST');
    expect(checkPlaylist(text).filter((f) => f.severity === 'error')).toEqual([]);
  }, 180_000);

  it('a live configuration inserts a VMAP pre-roll into a VOD, keeping every content segment', async () => {
    // a VOD without cues takes its breaks from the VMAP
    h.origin.cueForm = 'none';
    const guid = await h.configure('/vmap?breaks=preroll', { type: 'live' });
    const text = await videoPlaylist(guid, 'vod/master.m3u8');
    const pl = scanMediaPlaylist(text).playlist!;
    expect(isAd(pl.segments[0]!.uri), text).toBe(true);
    expect(pl.segments.filter((s) => !isAd(s.uri))).toHaveLength(CLIP_SEGMENTS);
    const ads = pl.segments.filter((s) => isAd(s.uri)).reduce((t, s) => t + s.duration, 0);
    expect(Math.abs(ads - AD_SECONDS.a)).toBeLessThan(0.25);
    expect(pl.endList).toBe(true);
  }, 180_000);

  it('a VOD that says so only by EXT-X-PLAYLIST-TYPE:VOD (no ENDLIST) gets the VOD rules, and its tags stay as written', async () => {
    h.origin.cueForm = 'none';
    h.origin.rewrite = (pathname, body) => (pathname.startsWith('/vod/') ? body.replace('#EXT-X-ENDLIST\n', '') : body);
    try {
      const guid = await h.configure('/vmap?breaks=preroll', { type: 'broker' });
      const text = await videoPlaylist(guid, 'vod/master.m3u8');
      const pl = scanMediaPlaylist(text).playlist!;
      // inserted, not replacing: the pre-roll comes before all the content
      expect(isAd(pl.segments[0]!.uri), text).toBe(true);
      expect(pl.segments.filter((s) => !isAd(s.uri))).toHaveLength(CLIP_SEGMENTS);
      expect(pl.playlistType).toBe('VOD');
      expect(pl.endList).toBe(false);
      expect(h.vast.requests.some((r) => r.path === '/vmap')).toBe(true);
    } finally {
      h.origin.rewrite = undefined;
    }
  }, 180_000);

  it('a live stream is not taken for a VOD: no VMAP is asked for its avails', async () => {
    h.origin.position = (CLIP_SEGMENTS + BREAK_START + 6) * SEGMENT_SECONDS;
    h.origin.cueForm = 'none';
    try {
      const before = h.vast.requests.filter((r) => r.path === '/vmap').length;
      const guid = await h.configure('/vmap?breaks=preroll', { type: 'broker' });
      const master = await h.get(`/v1/master/${guid}/live/master.m3u8`);
      const media = await h.get(variantUrls(master.text).find((u) => !master.text.includes(`URI="${u}"`))!);
      expect(media.status).toBe(200);
      expect(segmentUris(media.text).every((u) => u.startsWith(h.origin.url))).toBe(true);
      expect(h.vast.requests.filter((r) => r.path === '/vmap').length).toBe(before);
    } finally {
      h.origin.cueForm = 'daterange';
    }
  });
});
