import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPlaylist } from '../../ssai/check/playlist-checker.js';
import { scanMediaPlaylist } from '../../media/playlist-scanner.js';
import { BREAK_START, CLIP_SEGMENTS, SEGMENT_SECONDS, type CueForm } from '../../fixtures/origin-server.js';
import { segmentUris, startSsai, variantUrls, type SsaiHarness } from './setup.js';

describe('stitching through the proxy', () => {
  let h: SsaiHarness;
  let guid: string;

  beforeAll(async () => {
    h = await startSsai();
    guid = await h.configure('/vast3?sid=[session.id]&dur=[avail.duration]&idx=[avail.index]&g=[player_params.genre]&ev=[scte.splice_event_id]&cb=[cachebuster]');
  });
  afterAll(async () => h?.close());

  /** positions the live edge so the whole break of the second loop is in the window */
  const showBreak = () => { h.origin.position = (CLIP_SEGMENTS + BREAK_START + 6) * SEGMENT_SECONDS; };

  it('rewrites every variant and rendition of the master to session media playlists, with CORS', async () => {
    const master = await h.get(`/v1/master/${guid}/live/master.m3u8?ads.genre=news`);
    expect(master.status).toBe(200);
    expect(master.headers.get('access-control-allow-origin')).toBe('*');
    expect(master.headers.get('content-type')).toContain('mpegurl');
    const urls = variantUrls(master.text);
    expect(urls).toHaveLength(5);
    for (const u of urls) expect(u).toMatch(new RegExp(`^/v1/manifest/${guid}/[0-9a-f-]{36}/\\d+\\.m3u8$`));
    expect(master.text).toContain('LANGUAGE="fr"');
  });

  it.each<CueForm>(['cue-out', 'cue-out-cont-slash', 'daterange', 'oatcls', 'splicepoint', 'scte35'])('stitches the ad at a %s cue', async (form) => {
    h.origin.cueForm = form;
    showBreak();
    const master = await h.get(`/v1/master/${guid}/live/master.m3u8?ads.genre=news`);
    const video = variantUrls(master.text).find((u) => /\/\d+\.m3u8$/.test(u) && !master.text.includes(`URI="${u}"`))!;
    const media = await h.get(video);
    expect(media.status).toBe(200);
    const uris = segmentUris(media.text);
    const ads = uris.filter((u) => u.startsWith('/v1/segment/'));
    expect(ads.length).toBeGreaterThan(0);
    expect(uris.filter((u) => u.startsWith(h.origin.url)).length).toBeGreaterThan(0);
    expect(media.text).toContain('#EXT-X-DISCONTINUITY');
    expect(media.text).toContain('CLASS="com.engine.ad"');
    expect(checkPlaylist(media.text).filter((f) => f.severity === 'error')).toEqual([]);
    const adRequest = h.vast.requests.at(-1)!;
    expect(adRequest.query.get('g')).toBe('news');
    expect(adRequest.query.get('dur')).toBe('10');
    expect(adRequest.query.get('idx')).toBe('0');
    expect(adRequest.query.get('sid')).toMatch(/^[0-9a-f-]{36}$/);
    expect(adRequest.query.get('cb')).toMatch(/^\d+$/);
    if (!form.startsWith('cue-out')) expect(adRequest.query.get('ev')).toBe('1001');
    const redirect = await h.get(ads[0]!);
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get('location')).toMatch(/\/media\/creatives\/.+\.m4s$/);
    const segment = await fetch(redirect.headers.get('location')!);
    expect(segment.status).toBe(200);
  });

  it('stitches the demuxed audio in both languages and the subtitles at the same times as the video', async () => {
    h.origin.cueForm = 'daterange';
    showBreak();
    const master = await h.get(`/v1/master/${guid}/live/master.m3u8`);
    const urls = variantUrls(master.text);
    const texts = await Promise.all(urls.map(async (u) => (await h.get(u)).text));
    const shape = texts.map((t) => {
      const pl = scanMediaPlaylist(t).playlist!;
      const ad = pl.segments.filter((s) => s.uri.startsWith('/v1/') || s.uri.endsWith('empty.vtt'));
      const adStart = pl.segments.findIndex((s) => s.uri.startsWith('/v1/'));
      return {
        adSeconds: Math.round(ad.reduce((s, x) => s + x.duration, 0) * 10) / 10,
        firstAdPdt: adStart >= 0 ? pl.segments[adStart]!.pdtMs : undefined,
        resumePdt: pl.segments.find((s, i) => i > adStart && !s.uri.startsWith('/v1/'))?.pdtMs,
      };
    });
    if (process.env.DEBUG_SSAI) console.log(JSON.stringify(shape), texts.join('\n----\n'));
    expect(shape).toHaveLength(5);
    for (const s of shape) {
      expect(s.adSeconds).toBeGreaterThan(5);
      expect(s.firstAdPdt).toBe(shape[0]!.firstAdPdt);
      expect(s.resumePdt).toBe(shape[0]!.resumePdt);
    }
  });
});
