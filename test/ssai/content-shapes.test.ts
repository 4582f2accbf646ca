// Issue 19 point 1: ads take the shape of the content they replace (container, muxed or demuxed audio, H.264 profile,
// frame rate, audio rate and channels), checked on the stitched playlists and on the ad media itself with ffprobe.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BREAK_SECONDS, BREAK_START, CLIP_SEGMENTS, LAYOUTS, OriginServer, SEGMENT_SECONDS, type OriginLayout } from '../../fixtures/origin-server.js';
import { checkPlaylistUrl } from '../../ssai/check/check-url.js';
import { probeSegment } from '../../media/media-probe.js';
import { scanMediaPlaylist, scanMultivariantPlaylist, type MediaPlaylist } from '../../media/playlist-scanner.js';
import { startEngineWith, startSsai, type SsaiHarness } from './setup.js';
import type { TestEngine } from '../helpers/engine.js';

const abs = (base: string, u: string) => new URL(u, base).href;

describe.each<OriginLayout>(['muxed-ts', 'muxed-fmp4', 'demuxed-fmp4'])('ads in the shape of %s content', (layout) => {
  let engine: TestEngine;
  let h: SsaiHarness;
  let guid = '';
  beforeAll(async () => {
    engine = await startEngineWith();
    h = await startSsai({ engine, origin: { layout } });
    guid = await h.configure('/vast4?sid=[session.id]');
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await engine?.close();
  });

  /** The stitched media playlists of a live session whose window holds the whole second-loop break. */
  async function stitched(): Promise<Array<{ url: string; pl: MediaPlaylist; text: string }>> {
    h.origin.position = (CLIP_SEGMENTS + BREAK_START + 6) * SEGMENT_SECONDS;
    const master = await h.get(`/v1/master/${guid}/live/master.m3u8`);
    const mv = scanMultivariantPlaylist(master.text).playlist!;
    const urls = [...mv.variants.map((v) => v.uri), ...mv.renditions.filter((r) => r.type === 'AUDIO' && r.uri).map((r) => r.uri!)];
    return Promise.all(urls.map(async (u) => {
      const text = (await h.get(u)).text;
      return { url: `${h.engine.url}${u}`, pl: scanMediaPlaylist(text).playlist!, text };
    }));
  }

  it('stitches ads in the content container, with the content map restated after the break', async () => {
    let lists = await stitched();
    // The first playlist request may return before the creatives are prepared: ask until the break is stitched.
    for (let i = 0; i < 60 && !lists[0]!.text.includes('/v1/segment/'); i++) { await new Promise((r) => setTimeout(r, 2000)); lists = await stitched(); }
    expect(lists.length).toBe(layout === 'demuxed-fmp4' ? 4 : 2);
    for (const { url, pl, text } of lists) {
      const ads = pl.segments.filter((s) => s.uri.includes('/v1/segment/'));
      expect(ads.reduce((t, s) => t + s.duration, 0), text).toBeCloseTo(BREAK_SECONDS, 0);
      const content = pl.segments.filter((s) => !s.uri.includes('/v1/segment/'));
      const after = content.at(-1)!;
      if (layout === 'muxed-ts') {
        expect(ads.every((s) => s.uri.endsWith('.ts') && !s.map), text).toBe(true);
        expect(pl.segments.every((s) => !s.map), text).toBe(true);
      } else {
        expect(ads.every((s) => s.uri.endsWith('.m4s') && s.map?.uri.includes('/creatives/')), text).toBe(true);
        // The first content segment after the break is under the content's own init segment again.
        expect(after.map?.uri, text).toMatch(/\/media\/(v\d|en|fr)\/init\.mp4$/);
      }
      const findings = await checkPlaylistUrl(url, 0);
      expect(findings, text).toEqual([]);
    }
  }, 240_000);

  it('gives the ad segments the content codec profile, frame rate, audio rate and channels', async () => {
    const l = LAYOUTS[layout];
    for (const { url, pl } of await stitched()) {
      const ad = pl.segments.find((s) => s.uri.includes('/v1/segment/'))!;
      const content = pl.segments.find((s) => !s.uri.includes('/v1/segment/'))!;
      const [a, c] = await Promise.all([
        probeSegment(abs(url, ad.uri), ad.map ? abs(url, ad.map.uri) : undefined),
        probeSegment(abs(url, content.uri), content.map ? abs(url, content.map.uri) : undefined),
      ]);
      expect(a && c, `${ad.uri} and ${content.uri} probe`).toBeTruthy();
      if (c!.video) {
        expect(a!.video?.profile).toBe(c!.video.profile);
        expect([a!.video?.width, a!.video?.height]).toEqual([c!.video.width, c!.video.height]);
        if (layout === 'muxed-ts') expect(a!.video?.frameRate).toBe(l.fps);
      }
      if (c!.audio) {
        // Muxed content: the ad segment carries its audio, at the content's rate and channels.
        expect(a!.audio, `audio in ${ad.uri}`).toBeDefined();
        expect([a!.audio!.sampleRate, a!.audio!.channels]).toEqual([l.sampleRate, l.channels]);
      } else expect(a!.audio).toBeUndefined();
    }
  }, 120_000);
});

describe('engine check-playlist on a muxed rendition', () => {
  it('flags the ad spans that carry no audio (a video-only ad stitched into muxed content)', async () => {
    const [muxed, demuxed] = await Promise.all([OriginServer.start({ layout: 'muxed-fmp4' }), OriginServer.start({ layout: 'demuxed-fmp4' })]);
    // Muxed content, then a "break" of the demuxed origin's video-only segments, then the content again.
    const media = ['#EXTM3U', '#EXT-X-VERSION:7', '#EXT-X-TARGETDURATION:2', '#EXT-X-PLAYLIST-TYPE:VOD',
      `#EXT-X-MAP:URI="${muxed.url}/media/v0/init.mp4"`, '#EXTINF:2,', `${muxed.url}/media/v0/seg_000.m4s`,
      '#EXT-X-DISCONTINUITY', `#EXT-X-MAP:URI="${demuxed.url}/media/v0/init.mp4"`, '#EXTINF:2,', `${demuxed.url}/media/v0/seg_001.m4s`,
      '#EXT-X-DISCONTINUITY', `#EXT-X-MAP:URI="${muxed.url}/media/v0/init.mp4"`, '#EXTINF:2,', `${muxed.url}/media/v0/seg_002.m4s`, '#EXT-X-ENDLIST', ''].join('\n');
    const server = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/vnd.apple.mpegurl' });
      res.end(req.url === '/master.m3u8' ? '#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=700000,CODECS="avc1.42c01e,mp4a.40.2"\nv0.m3u8\n' : media);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const findings = await checkPlaylistUrl(`${base}/master.m3u8`, 0);
      expect(findings).toEqual([expect.objectContaining({ rule: 'SEGMENT_WITHOUT_AUDIO', message: expect.stringContaining('seg_001.m4s') })]);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
      await Promise.all([muxed.close(), demuxed.close()]);
    }
  }, 60_000);
});
