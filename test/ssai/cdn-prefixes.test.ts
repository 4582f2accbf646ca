// Issue 31 item 5 through the real proxy: content_segment_prefix puts every content segment, init segment, part and
// preload hint under the content CDN by its path after source_url; ad_segment_prefix puts every ad (and slate, and
// empty subtitle) segment and ad init segment under the ad CDN by its path after the engine's public URL. The CDN
// contract is checked as a CDN would use it: the origin serves a content URI's path, the engine serves an ad URI's
// path (public URL + the part after the prefix) and fires its beacons. Stitched and guided.
import { mkdtempSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateMedia } from '../../fixtures/generate-media.js';
import { BREAK_SECONDS, BREAK_START, CLIP_SEGMENTS, SEGMENT_SECONDS } from '../../fixtures/origin-server.js';
import { AD_SECONDS } from '../../fixtures/vast-server.js';
import { scanMediaPlaylist, scanMultivariantPlaylist } from '../../media/playlist-scanner.js';
import { checkMediaPlaylist } from '../../ssai/check/playlist-checker.js';
import { INTERSTITIAL_CLASS } from '../../ssai/stitch/interstitials.js';
import { startSsai, variantUrls, type SsaiHarness } from './setup.js';

const CONTENT = 'https://content-cdn.test/c/'; // a trailing slash: joined with one slash all the same
const AD = 'https://ad-cdn.test/e';
const FIXTURES = path.resolve(import.meta.dirname, '../../fixtures/playlists');

/** Every media URI of a media playlist: segment lines and the URI of EXT-X-MAP, EXT-X-PART and EXT-X-PRELOAD-HINT. */
function mediaUris(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    if (!line.startsWith('#')) out.push(line);
    else if (/^#EXT-X-(MAP|PART|PRELOAD-HINT):/.test(line)) out.push(/URI="([^"]*)"/.exec(line)![1]!);
  }
  return out;
}
const errors = (text: string) => checkMediaPlaylist(text).filter((f) => f.severity === 'error');

describe('CDN prefixes', () => {
  let h: SsaiHarness;
  let publicUrl: string;
  const guids: Record<string, string> = {};

  async function configure(source: string, prefixes: boolean, extra: Record<string, string> = {}): Promise<string> {
    const created = await h.engine.api('POST', '/broker/adinserts', {
      headers: h.auth,
      body: { name: 'prefixes', type: 'live', ad_server: `${h.vast.url}/vast4`, source_url: source,
        ...(prefixes ? { content_segment_prefix: CONTENT, ad_segment_prefix: AD } : {}), ...extra },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    return created.body.guid as string;
  }

  /** A new session's playlists: its master's variants (videos first), then its renditions, with their text. */
  async function session(guid: string, entry: string, query = ''): Promise<Array<{ url: string; text: string }>> {
    const master = await h.get(`/v1/master/${guid}/${entry}${query}`);
    expect(master.status, master.text).toBe(200);
    const pl = scanMultivariantPlaylist(master.text).playlist!;
    const out: Array<{ url: string; text: string }> = [];
    for (const url of [...pl.variants.map((v) => v.uri), ...pl.renditions.flatMap((r) => (r.uri ? [r.uri] : []))]) {
      const r = await h.get(url);
      expect(r.status, r.text).toBe(200);
      out.push({ url, text: r.text });
    }
    return out;
  }

  /** What the engine answers at the path an ad CDN forwards an ad URI to: its public URL + the part after the prefix. */
  async function throughAdCdn(uri: string): Promise<{ status: number; text: string; headers: Headers }> {
    expect(uri.startsWith(`${AD}/`), uri).toBe(true);
    return h.get(`${publicUrl}${uri.slice(AD.length)}`);
  }

  beforeAll(async () => {
    // no playlist ends before a break still being decided: the sessions compared list the same segments
    h = await startSsai({ cutBeforeUndecidedBreaks: false, origin: { cueForm: 'daterange' } });
    publicUrl = h.engine.ctx.config.publicUrl;
    guids.prefixed = await configure(`${h.origin.url}/`, true);
    guids.plain = await configure(`${h.origin.url}/`, false);
    guids.outside = await configure(`${h.origin.url}/live`, true);
  }, 120_000);
  afterAll(async () => h?.close());

  it('stitched: content under the content prefix at its origin path, ads under the ad prefix served and beaconed by the engine', async () => {
    h.origin.position = (CLIP_SEGMENTS + BREAK_START + 6) * SEGMENT_SECONDS;
    const prefixed = await session(guids.prefixed!, 'live/master.m3u8');
    const plain = await session(guids.plain!, 'live/master.m3u8');
    expect(prefixed).toHaveLength(5);
    let videoAds: string[] = []; // of the first track: a video variant
    for (const [i, track] of prefixed.entries()) {
      const uris = mediaUris(track.text);
      const content = uris.filter((u) => u.startsWith(CONTENT));
      const ads = uris.filter((u) => u.startsWith(`${AD}/`));
      expect(content.length + ads.length, track.text).toBe(uris.length); // every URI behind one CDN or the other
      expect(content.length).toBeGreaterThan(0);
      expect(ads.length).toBeGreaterThan(0);
      // the same origin files as the session without prefixes, in the same order
      const plainUris = mediaUris(plain[i]!.text);
      expect(content.map((u) => `${h.origin.url}/${u.slice(CONTENT.length)}`)).toEqual(plainUris.filter((u) => u.startsWith(h.origin.url)));
      expect(ads.length).toBe(plainUris.filter((u) => !u.startsWith(h.origin.url)).length);
      expect(errors(track.text)).toEqual([]);
      // the origin serves a content URI's path (a segment and, fMP4, the init segment)
      for (const u of [content[0]!, content[content.length - 1]!]) expect((await h.get(`${h.origin.url}/${u.slice(CONTENT.length)}`)).status, u).toBe(200);
      if (i === 0) videoAds = ads;
      // every ad URI (segments through the beacon route, the creative's init segment, empty subtitle spans) is the engine's
      for (const u of ads) {
        const r = await throughAdCdn(u);
        if (u.includes('/v1/segment/')) {
          expect(r.status, u).toBe(302);
          expect((await fetch(r.headers.get('location')!)).status).toBe(200);
        } else expect(r.status, u).toBe(200);
      }
    }
    expect(videoAds.some((u) => u.includes('/v1/segment/'))).toBe(true);
    expect(videoAds.some((u) => u.startsWith(`${AD}/media/`))).toBe(true); // the ad's EXT-X-MAP
    await h.engine.ctx.services.ssai!.beacons.idle();
    // the session's beacons fired once each, from segments fetched through the ad CDN's path
    for (const ad of ['a', 'b']) for (const event of ['impression', 'start', 'complete']) expect(h.vast.beaconCount(event, ad), `${event} of ${ad}`).toBe(1);
  });

  it('guided: content under the content prefix in the shared playlist, asset segments under the ad prefix, asset lists on the engine', async () => {
    h.origin.position = (3 * CLIP_SEGMENTS + BREAK_START + 3) * SEGMENT_SECONDS;
    const [video] = await session(guids.prefixed!, 'live/master.m3u8', '?ads.mode=guided');
    const uris = mediaUris(video!.text);
    expect(uris.length).toBeGreaterThan(0);
    for (const u of uris) expect(u.startsWith(CONTENT), u).toBe(true);
    expect(errors(video!.text)).toEqual([]);
    const range = video!.text.split('\n').find((l) => l.includes(INTERSTITIAL_CLASS))!;
    const assetList = new URL(/X-ASSET-LIST="([^"]*)"/.exec(range)![1]!, `${h.engine.url}${video!.url}`).href;
    const assets = JSON.parse((await h.get(assetList)).text) as { ASSETS: Array<{ URI: string }> };
    expect(assets.ASSETS.length).toBe(2);
    const before = h.vast.beaconCount('impression', 'a');
    for (const asset of assets.ASSETS) {
      expect(asset.URI.startsWith(`${publicUrl}/v1/manifest/`), asset.URI).toBe(true); // playlists stay on the engine
      const master = await h.get(asset.URI);
      expect(master.status, master.text).toBe(200);
      for (const v of variantUrls(master.text)) {
        const media = await h.get(new URL(v, asset.URI).href);
        expect(media.status, media.text).toBe(200);
        expect(scanMediaPlaylist(media.text).playlist!.segments.length).toBeGreaterThan(0);
        for (const u of mediaUris(media.text)) {
          const r = await throughAdCdn(u);
          expect(r.status, u).toBe(u.includes('/v1/segment/') ? 302 : 200);
        }
      }
    }
    await h.engine.ctx.services.ssai!.beacons.idle();
    expect(h.vast.beaconCount('impression', 'a') - before).toBe(1);
  });

  it('counts slate as ad: its segments under the ad prefix, served by the engine', async () => {
    const png = path.join(mkdtempSync(path.join(os.tmpdir(), 'engine-slate-')), 'slate.png');
    await generateMedia('image', png);
    const image = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(readFileSync(png)));
    await new Promise<void>((r) => image.listen(0, '127.0.0.1', r));
    try {
      // /vast3 answers one ad shorter than the break: the rest is slate
      expect(AD_SECONDS.a).toBeLessThan(BREAK_SECONDS);
      const guid = await configure(`${h.origin.url}/`, true, { ad_server: `${h.vast.url}/vast3`, slate_ad: `http://127.0.0.1:${(image.address() as AddressInfo).port}/slate.png` });
      h.origin.position = (9 * CLIP_SEGMENTS + BREAK_START + 6) * SEGMENT_SECONDS;
      const [video] = await session(guid, 'live/master.m3u8');
      const lines = video!.text.split('\n');
      const ads = lines.flatMap((l, i) => (l.startsWith(`${AD}/v1/segment/`) ? [{ uri: l, seconds: Number(/^#EXTINF:([\d.]+)/.exec(lines[i - 1] ?? '')?.[1]) }] : []));
      // the slate follows the ad (its ad index is 1) and the break keeps its length
      const slate = ads.filter((a) => a.uri.split('/')[9] === '1');
      expect(slate.length).toBeGreaterThan(0);
      expect(ads.reduce((t, a) => t + a.seconds, 0)).toBeCloseTo(BREAK_SECONDS, 0);
      for (const a of slate) {
        const r = await throughAdCdn(a.uri);
        expect(r.status, a.uri).toBe(302);
        expect((await fetch(r.headers.get('location')!)).status).toBe(200);
      }
    } finally {
      await new Promise<void>((r) => image.close(() => r()));
    }
  });

  it('keeps a segment outside source_url at its own absolute URL', async () => {
    // source_url is the origin's /live: its segments under /media are outside it
    h.origin.position = (5 * CLIP_SEGMENTS + BREAK_START + 6) * SEGMENT_SECONDS;
    const tracks = await session(guids.outside!, 'master.m3u8');
    const content = mediaUris(tracks[0]!.text).filter((u) => !u.startsWith(`${AD}/`));
    expect(content.length).toBeGreaterThan(0);
    for (const u of content) expect(u.startsWith(`${h.origin.url}/media/`), u).toBe(true);
  });

  it('prefixes segments with their query as written, parts and preload hints, not keys or rendition reports', async () => {
    const served: Record<string, string> = {
      '/live/v0.m3u8': readFileSync(path.join(FIXTURES, 'll-video.m3u8'), 'utf8'),
      '/live/v1.m3u8': readFileSync(path.join(FIXTURES, 'aes128-live.m3u8'), 'utf8'),
    };
    h.origin.rewrite = (pathname, body) => served[pathname] ?? body;
    try {
      const [ll] = await session(guids.prefixed!, 'live/v0.m3u8');
      const lines = ll!.text.split('\n');
      expect(lines).toContain(`#EXT-X-MAP:URI="${CONTENT}live/init-720.mp4"`);
      expect(lines).toContain(`${CONTENT}live/fileSequence270.mp4`);
      expect(lines).toContain(`#EXT-X-PART:DURATION=0.33334,URI="${CONTENT}live/filePart271.0.mp4",INDEPENDENT=YES`);
      expect(lines).toContain(`#EXT-X-PRELOAD-HINT:TYPE=PART,URI="${CONTENT}live/filePart272.d.mp4"`);
      for (const u of mediaUris(ll!.text)) expect(u.startsWith(`${CONTENT}live/`), u).toBe(true);
      const reports = lines.filter((l) => l.startsWith('#EXT-X-RENDITION-REPORT:'));
      expect(reports.length).toBe(2);
      for (const r of reports) expect(r).not.toContain('content-cdn');
      expect(errors(ll!.text)).toEqual([]);

      const [keyed] = await session(guids.prefixed!, 'live/v1.m3u8');
      const uris = mediaUris(keyed!.text);
      expect(uris).toEqual([
        `${CONTENT}live/live/7794.ts?st=1714546800&e=abc`, `${CONTENT}live/live/7795.ts?st=1714546800&e=abc`,
        `${CONTENT}live/live/7796.ts?st=1714546800&e=abc`, `${CONTENT}slate/slate-10s.ts`, `${CONTENT}live/live/7798.ts?st=1714546800&e=abc`,
      ]);
      // keys are not segments: as the origin names them (made absolute)
      expect(keyed!.text).toContain('URI="https://keys.example.com/key?id=7794&sig=Zm9v%2Bbar"');
      expect(keyed!.text).toContain(`URI="${h.origin.url}/keys/k7796.bin"`);
      expect(keyed!.text).toContain('URI="skd://k7798"');
      expect(errors(keyed!.text)).toEqual([]);
    } finally {
      h.origin.rewrite = undefined;
    }
  });

  it('leaves every URI as before when the configuration has no prefixes', async () => {
    h.origin.position = (7 * CLIP_SEGMENTS + BREAK_START + 6) * SEGMENT_SECONDS;
    const tracks = await session(guids.plain!, 'live/master.m3u8');
    for (const t of tracks) {
      for (const u of mediaUris(t.text)) expect(u.startsWith(h.origin.url) || u.startsWith('/v1/') || u.startsWith(`${publicUrl}/media/`), u).toBe(true);
    }
    expect(scanMultivariantPlaylist((await h.get(`/v1/master/${guids.plain}/live/master.m3u8`)).text).playlist!.variants.length).toBe(2);
  });
});
