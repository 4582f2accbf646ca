// Issue 31 point 9 through the real proxy: each stitched ad's EXT-X-DATERANGE names the viewer's own ad id, the VAST
// creative id, its UniversalAdId and AdSystem; a guided break's asset list and the tracking JSON name them too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BREAK_START, CLIP_SEGMENTS, SEGMENT_SECONDS } from '../../fixtures/origin-server.js';
import { scanMediaPlaylist, scanMultivariantPlaylist } from '../../media/playlist-scanner.js';
import { checkMediaPlaylist } from '../../ssai/check/playlist-checker.js';
import { startSsai, type SsaiHarness } from './setup.js';

/** The attributes of a playlist's date ranges that name an ad. */
function adDateRanges(text: string): Array<Record<string, string>> {
  const pl = scanMediaPlaylist(text).playlist!;
  return pl.segments.flatMap((s) => s.tags).filter((t) => t.name === 'EXT-X-DATERANGE' && t.value.includes('X-AD-ID')).map((t) => {
    const attrs: Record<string, string> = {};
    for (const m of t.value.matchAll(/([A-Z0-9-]+)=("[^"]*"|[^,]*)/g)) attrs[m[1]!] = m[2]!.replace(/^"|"$/g, '');
    return attrs;
  });
}

describe('ad ids in the manifest', () => {
  let h: SsaiHarness;
  let guid: string;

  beforeAll(async () => {
    h = await startSsai();
    guid = await h.configure('/vast-viewer?sid=[session.id]');
    h.origin.position = (CLIP_SEGMENTS + BREAK_START + 6) * SEGMENT_SECONDS;
  }, 120_000);
  afterAll(async () => h?.close());

  async function session(query = ''): Promise<{ sid: string; video: string }> {
    const master = await h.get(`/v1/master/${guid}/live/master.m3u8${query}`);
    const video = scanMultivariantPlaylist(master.text).playlist!.variants[0]!.uri;
    return { sid: video.split('/')[4]!, video };
  }

  const expected = (sid: string) => [
    { 'X-AD-ID': `ad-a-${sid}`, 'X-CREATIVE-ID': 'cr-a', 'X-UNIVERSAL-AD-ID': 'ad-id.org:UA-a', 'X-AD-SYSTEM': 'fixture' },
    { 'X-AD-ID': `ad-b-${sid}`, 'X-CREATIVE-ID': 'cr-b', 'X-UNIVERSAL-AD-ID': 'ad-id.org:UA-b', 'X-AD-SYSTEM': 'fixture' },
  ];

  it('names each stitched ad by its ids in its DATERANGE, each viewer its own, and lists them in the tracking JSON', async () => {
    const [a, b] = [await session(), await session()];
    for (const s of [a, b]) {
      const text = (await h.get(s.video)).text;
      expect(checkMediaPlaylist(text).filter((f) => f.severity === 'error')).toEqual([]);
      expect(adDateRanges(text)).toEqual(expected(s.sid).map((e) => expect.objectContaining(e)));
    }
    const tracking = JSON.parse((await h.get(`/v1/tracking/${guid}/${a.sid}`)).text) as { avails: Array<{ ads: Array<Record<string, unknown>> }> };
    expect(tracking.avails[0]!.ads.map((ad) => [ad.adId, ad.creativeId, ad.universalAdId, ad.adSystem]))
      .toEqual([[`ad-a-${a.sid}`, 'cr-a', 'ad-id.org:UA-a', 'fixture'], [`ad-b-${a.sid}`, 'cr-b', 'ad-id.org:UA-b', 'fixture']]);
  }, 180_000);

  it('names each ad of a guided break by its ids in the asset list', async () => {
    const s = await session('?ads.mode=guided');
    const text = (await h.get(s.video)).text;
    const tags = scanMediaPlaylist(text).playlist!.segments.flatMap((x) => x.tags);
    const list = tags.map((t) => /X-ASSET-LIST="([^"]+)"/.exec(t.value)?.[1]).find(Boolean)!;
    const assets = JSON.parse((await h.get(new URL(list, `${h.engine.url}${s.video}`).href)).text) as { ASSETS: Array<Record<string, unknown>> };
    expect(assets.ASSETS).toEqual(expected(s.sid).map((e) => expect.objectContaining(e)));
  }, 180_000);
});
