// Issue 31 point 1 through the real proxy: a break whose ads leave more of it unfilled than the configuration's
// personalization threshold is not personalised at all: the viewer sees the origin's content (stitched: its own
// segments; guided: an empty asset list). Under a larger threshold the ads play and the slate fills the rest.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateMedia } from '../../fixtures/generate-media.js';
import { EPOCH_MS, SEGMENT_SECONDS } from '../../fixtures/origin-server.js';
import { AD_SECONDS } from '../../fixtures/vast-server.js';
import { scanMediaPlaylist, scanMultivariantPlaylist } from '../../media/playlist-scanner.js';
import { segmentUris, startSsai, type SsaiHarness } from './setup.js';

/** The 60 s break of this test: from segment BREAK_AT, cued on the video playlists only (as packagers do). */
const BREAK_AT = 200;
const BREAK_S = 60;
const BREAK_SEGS = BREAK_S / SEGMENT_SECONDS;

/** The origin's playlists with their own cues replaced by one 60 s CUE-OUT break from BREAK_AT. */
function sixtySecondBreak(pathname: string, body: string): string {
  if (!/\/(v0|v1)\.m3u8$/.test(pathname)) return body;
  const out: string[] = [];
  for (const line of body.split('\n')) {
    const pdt = /^#EXT-X-PROGRAM-DATE-TIME:(.+)$/.exec(line);
    if (pdt) {
      const k = Math.round((Date.parse(pdt[1]!) - EPOCH_MS) / 1000 / SEGMENT_SECONDS);
      const rel = k - BREAK_AT;
      if (rel === 0) out.push(`#EXT-X-CUE-OUT:${BREAK_S}`);
      else if (rel > 0 && rel < BREAK_SEGS) out.push(`#EXT-X-CUE-OUT-CONT:ElapsedTime=${rel * SEGMENT_SECONDS},Duration=${BREAK_S}`);
      else if (rel === BREAK_SEGS) out.push('#EXT-X-CUE-IN');
    }
    out.push(line);
  }
  return out.join('\n');
}

/** A VAST pod of four ads, 20 s in all (6 + 4 + 6 + 4), its media on the fixture ad server. */
function pod(mediaBase: string): string {
  const ad = (i: number, name: 'a' | 'b') => `<Ad id="pod-${i}" sequence="${i}"><InLine><AdSystem>t</AdSystem><AdTitle>${name}</AdTitle>
<Impression><![CDATA[${mediaBase}/track/impression/${name}]]></Impression><Creatives><Creative id="cr-${name}"><Linear>
<Duration>00:00:0${AD_SECONDS[name]}.000</Duration><MediaFiles><MediaFile delivery="progressive" type="video/mp4" width="640" height="360" bitrate="800">
<![CDATA[${mediaBase}/media/${name}.mp4]]></MediaFile></MediaFiles></Linear></Creative></Creatives></InLine></Ad>`;
  return `<?xml version="1.0"?><VAST version="3.0">${ad(1, 'a')}${ad(2, 'b')}${ad(3, 'a')}${ad(4, 'b')}</VAST>`;
}

describe('personalization threshold', () => {
  let h: SsaiHarness;
  let side: http.Server;
  let sideUrl: string;
  /** ad requests per configuration tag */
  const asked = new Map<string, number>();
  let imageUrl: string;

  beforeAll(async () => {
    h = await startSsai({ origin: { cueForm: 'none' } });
    h.origin.rewrite = sixtySecondBreak;
    h.origin.windowSegments = BREAK_SEGS + 10;
    const png = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'engine-threshold-')), 'slate.png');
    await generateMedia('image', png);
    side = http.createServer((req, res) => {
      const u = new URL(req.url ?? '/', 'http://x');
      if (u.pathname === '/slate.png') { res.writeHead(200, { 'content-type': 'image/png' }); res.end(fs.readFileSync(png)); return; }
      const tag = u.searchParams.get('t') ?? '';
      asked.set(tag, (asked.get(tag) ?? 0) + 1);
      res.writeHead(200, { 'content-type': 'application/xml' });
      res.end(pod(h.vast.url));
    });
    await new Promise<void>((r) => side.listen(0, '127.0.0.1', r));
    sideUrl = `http://127.0.0.1:${(side.address() as AddressInfo).port}`;
    imageUrl = `${sideUrl}/slate.png`;
    // the whole break and five segments either side in the window
    h.origin.position = (BREAK_AT + BREAK_SEGS + 5) * SEGMENT_SECONDS;
  }, 120_000);
  afterAll(async () => {
    await h?.close();
    await new Promise<void>((r) => side?.close(() => r()));
  });

  async function configure(tag: string, threshold: number): Promise<string> {
    const created = await h.engine.api('POST', '/broker/adinserts', {
      headers: h.auth,
      body: { name: tag, type: 'live', ad_server: `${sideUrl}/vast?t=${tag}`, source_url: `${h.origin.url}/`, slate_ad: imageUrl, personalization_threshold_seconds: threshold },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    return created.body.guid as string;
  }

  async function videoPlaylist(guid: string, query = ''): Promise<{ url: string; text: string }> {
    const master = await h.get(`/v1/master/${guid}/live/master.m3u8${query}`);
    expect(master.status, master.text).toBe(200);
    const url = scanMultivariantPlaylist(master.text).playlist!.variants[0]!.uri;
    const media = await h.get(url);
    expect(media.status, media.text).toBe(200);
    return { url, text: media.text };
  }

  /** Seconds of the stitched playlist that go through /v1/segment (ads and slate). */
  function stitchedSeconds(text: string): number {
    const pl = scanMediaPlaylist(text).playlist!;
    return pl.segments.filter((s) => s.uri.startsWith('/v1/segment/')).reduce((t, s) => t + s.duration, 0);
  }

  it('shows the origin\'s 60 s when 20 s of ads leave 40 s unfilled under a 30 s threshold (stitched)', async () => {
    const guid = await configure('s30', 30);
    const origin = await h.get(`${h.origin.url}/live/v0.m3u8`);
    const { text } = await videoPlaylist(guid);
    expect(asked.get('s30')).toBe(1); // the ad server was asked: its answer is what falls short
    const uris = segmentUris(text);
    expect(uris.some((u) => u.startsWith('/v1/segment/'))).toBe(false);
    expect(uris).toEqual(segmentUris(origin.text).map((u) => `${h.origin.url}${u}`));
    // the decision is the session's: a reload shows the same, asking nothing more
    const again = await h.get((await videoPlaylist(guid)).url);
    expect(segmentUris(again.text).some((u) => u.startsWith('/v1/segment/'))).toBe(false);
    const metrics = await h.get('/metrics');
    expect(metrics.text).toMatch(/ssai_breaks_unpersonalised_total\{reason="threshold"\} [1-9]/);
    // a debug session says why its break played the content (issue 31 item 8)
    const debug = await videoPlaylist(guid, '?ads.debug=1');
    const log = JSON.parse((await h.get(`/v1/debug/${guid}/${debug.url.split('/')[4]}`, { headers: h.auth })).text) as { entries: Array<{ kind: string; outcome?: string; reason?: string }> };
    expect(log.entries.filter((e) => e.kind === 'decision').map((e) => [e.outcome, e.reason])).toEqual([['content', 'threshold']]);
  }, 180_000);

  it('shows the ads and then the slate for the rest under a 45 s threshold (stitched)', async () => {
    const guid = await configure('s45', 45);
    const { text } = await videoPlaylist(guid);
    expect(asked.get('s45')).toBe(1);
    expect(stitchedSeconds(text)).toBeCloseTo(BREAK_S, 0);
    expect(text.match(/CLASS="com\.engine\.ad"/g)).toHaveLength(4); // four ads; the slate is not an ad
  }, 180_000);

  it('answers an empty asset list under a 30 s threshold and the ads and slate under 45 s (guided)', async () => {
    for (const [tag, threshold] of [['g30', 30], ['g45', 45]] as const) {
      const guid = await configure(tag, threshold);
      const { url, text } = await videoPlaylist(guid, '?ads.mode=guided');
      const list = /X-ASSET-LIST="([^"]+)"/.exec(text)?.[1];
      expect(list, text).toBeDefined();
      const assets = await h.get(new URL(list!, `${h.engine.url}${url}`).toString());
      expect(assets.status).toBe(200);
      const body = JSON.parse(assets.text) as { ASSETS: Array<{ DURATION: number }> };
      expect(asked.get(tag)).toBe(1);
      if (threshold === 30) expect(body.ASSETS).toEqual([]);
      else {
        expect(body.ASSETS).toHaveLength(5); // four ads and the slate after them
        expect(body.ASSETS.reduce((t, a) => t + a.DURATION, 0)).toBeCloseTo(BREAK_S, 0);
      }
    }
  }, 240_000);
});
