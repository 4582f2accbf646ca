// Issue 31 item 3 through the real proxy: the configuration's bumpers play at the start and the end of every filled
// break, inside its length (start bumper, ads, end bumper, then the slate for the rest), in both insertion modes.
// A break without ads has none, a clip longer than 10 s is never played, and the beacons fire for the ads only.
// The bumper clips are the fixture ad server's own media: b.mp4 (4 s) opens the break, a.mp4 (6 s) closes it.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateMedia } from '../../fixtures/generate-media.js';
import { EPOCH_MS, SEGMENT_SECONDS } from '../../fixtures/origin-server.js';
import { AD_SECONDS } from '../../fixtures/vast-server.js';
import { scanMediaPlaylist, scanMultivariantPlaylist } from '../../media/playlist-scanner.js';
import { startSsai, type SsaiHarness } from './setup.js';

/** The 30 s break of this test: from segment BREAK_AT, cued on the video playlists only (as packagers do). */
const BREAK_AT = 200;
const BREAK_S = 30;
const BREAK_SEGS = BREAK_S / SEGMENT_SECONDS;
const START_BUMPER_S = AD_SECONDS.b;
const END_BUMPER_S = AD_SECONDS.a;

/** The origin's playlists with their own cues replaced by one 30 s CUE-OUT break from BREAK_AT. */
function oneBreak(pathname: string, body: string): string {
  if (!/\/(v0|v1)\.m3u8$/.test(pathname)) return body;
  const out: string[] = [];
  for (const line of body.split('\n')) {
    const pdt = /^#EXT-X-PROGRAM-DATE-TIME:(.+)$/.exec(line);
    if (pdt) {
      const rel = Math.round((Date.parse(pdt[1]!) - EPOCH_MS) / 1000 / SEGMENT_SECONDS) - BREAK_AT;
      if (rel === 0) out.push(`#EXT-X-CUE-OUT:${BREAK_S}`);
      else if (rel > 0 && rel < BREAK_SEGS) out.push(`#EXT-X-CUE-OUT-CONT:ElapsedTime=${rel * SEGMENT_SECONDS},Duration=${BREAK_S}`);
      else if (rel === BREAK_SEGS) out.push('#EXT-X-CUE-IN');
    }
    out.push(line);
  }
  return out.join('\n');
}

/** A 12 s clip (too long for a bumper), made once per machine. */
async function longClip(): Promise<string> {
  const file = path.join(os.tmpdir(), 'engine-ssai-bumper-12s-v1.mp4');
  if (fs.existsSync(file)) return file;
  const work = `${file}.partial-${process.pid}.mp4`;
  await promisify(execFile)('ffmpeg', ['-hide_banner', '-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=size=640x360:rate=30:duration=12',
    '-f', 'lavfi', '-i', 'sine=frequency=700:sample_rate=48000:duration=12', '-map', '0:v', '-map', '1:a',
    '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '96k', '-movflags', '+faststart', work]);
  fs.renameSync(work, file);
  return file;
}

type Listed = { uri: string; duration: number; adIndex: number };

describe('bumpers', () => {
  let h: SsaiHarness;
  let side: http.Server;
  let sideUrl: string;

  beforeAll(async () => {
    h = await startSsai({ origin: { cueForm: 'none' } });
    h.origin.rewrite = oneBreak;
    h.origin.windowSegments = BREAK_SEGS + 10;
    const png = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'engine-bumpers-')), 'slate.png');
    await generateMedia('image', png);
    const long = await longClip();
    side = http.createServer((req, res) => {
      const file = req.url === '/slate.png' ? png : req.url === '/long.mp4' ? long : undefined;
      if (!file) { res.writeHead(404).end(); return; }
      res.writeHead(200, { 'content-type': file === png ? 'image/png' : 'video/mp4' });
      res.end(fs.readFileSync(file));
    });
    await new Promise<void>((r) => side.listen(0, '127.0.0.1', r));
    sideUrl = `http://127.0.0.1:${(side.address() as AddressInfo).port}`;
    // the whole break and five segments either side in the window
    h.origin.position = (BREAK_AT + BREAK_SEGS + 5) * SEGMENT_SECONDS;
  }, 180_000);
  afterAll(async () => {
    await h?.close();
    await new Promise<void>((r) => side?.close(() => r()));
  });

  async function configure(adServerPath: string, bumpers: { start?: string; end?: string } = { start: `${h.vast.url}/media/b.mp4`, end: `${h.vast.url}/media/a.mp4` }): Promise<string> {
    const created = await h.engine.api('POST', '/broker/adinserts', {
      headers: h.auth,
      body: {
        name: 'bumpers', type: 'live', ad_server: `${h.vast.url}${adServerPath}`, source_url: `${h.origin.url}/`, slate_ad: `${sideUrl}/slate.png`,
        ...(bumpers.start ? { bumper_start_url: bumpers.start } : {}), ...(bumpers.end ? { bumper_end_url: bumpers.end } : {}),
      },
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

  /** The stitched break's segments (ads, bumpers, slate): /v1/segment/{guid}/{sid}/{avail}/{adIndex}/{n}/{segment}. */
  function breakSegments(text: string): Listed[] {
    return scanMediaPlaylist(text).playlist!.segments.filter((s) => s.uri.startsWith('/v1/segment/'))
      .map((s) => ({ uri: s.uri, duration: s.duration, adIndex: Number(s.uri.split('/')[6]) }));
  }

  /** Seconds per item of the break, in order: [adIndex, seconds]. */
  function items(listed: Listed[]): Array<[number, number]> {
    const out: Array<[number, number]> = [];
    for (const s of listed) {
      const last = out[out.length - 1];
      if (last && last[0] === s.adIndex) last[1] = Math.round((last[1] + s.duration) * 1000) / 1000;
      else out.push([s.adIndex, s.duration]);
    }
    return out;
  }

  /** The creative a segment redirect serves (its key starts with the creative id: `bumper-start-…`, `cr-a-…`). */
  async function creativeOf(uri: string): Promise<string> {
    const r = await h.get(uri);
    expect(r.status).toBe(302);
    return r.headers.get('location') ?? '';
  }

  it('plays the start bumper, the ads, the end bumper and then the slate, within the break (stitched)', async () => {
    const guid = await configure('/vast4');
    const { text } = await videoPlaylist(guid);
    const listed = breakSegments(text);
    // start bumper (b, 4 s), ad a (6 s), ad b (4 s), end bumper (a, 6 s), slate for the 10 s left
    const seconds = items(listed);
    expect(seconds.map(([i]) => i)).toEqual([0, 1, 2, 3, 4]);
    expect(seconds.slice(0, 4).map(([, s]) => Math.round(s))).toEqual([START_BUMPER_S, AD_SECONDS.a, AD_SECONDS.b, END_BUMPER_S]);
    expect(listed.reduce((t, s) => t + s.duration, 0)).toBeCloseTo(BREAK_S, 0);
    const first = (adIndex: number) => listed.find((s) => s.adIndex === adIndex)!.uri;
    expect(await creativeOf(first(0))).toMatch(/\/bumper-start-[^/]+\//);
    expect(await creativeOf(first(1))).toMatch(/\/cr-a-[^/]+\//);
    expect(await creativeOf(first(3))).toMatch(/\/bumper-end-[^/]+\//);
    expect(await creativeOf(first(4))).toMatch(/\/slate-[^/]+\//);
    // the date ranges: the bumpers in a class of their own, the two ads as ads, the slate none
    const ranges = text.split('\n').filter((l) => /CLASS="com\.engine\.(ad|bumper)"/.test(l));
    expect(ranges.map((l) => /CLASS="com\.engine\.(\w+)"/.exec(l)![1])).toEqual(['bumper', 'ad', 'ad', 'bumper']);
    expect(ranges[0]).toMatch(new RegExp(`DURATION=${START_BUMPER_S}(\\.\\d+)?,X-BUMPER="start"$`));
    expect(ranges[3]).toMatch(new RegExp(`DURATION=${END_BUMPER_S}(\\.\\d+)?,X-BUMPER="end"$`));
    expect(ranges[1]).toMatch(/X-AD-ID="ad-a"/);
    expect(ranges.some((l) => /bumper/.test(l) && /X-AD-ID/.test(l))).toBe(false);
  }, 300_000);

  it('lists the bumpers flagged in the tracking JSON, without beacons, and fires the beacons of the ads only', async () => {
    const guid = await configure('/vast-viewer?sid=[session.id]');
    const { url, text } = await videoPlaylist(guid);
    const sid = url.split('/')[4]!;
    const tracking = JSON.parse((await h.get(`/v1/tracking/${guid}/${sid}`)).text) as {
      avails: Array<{ ads: Array<{ adId: string; bumper?: string; startOffsetSeconds: number; trackingEvents: Array<{ beaconUrls: string[] }> }> }>;
    };
    const ads = tracking.avails[0]!.ads;
    expect(ads.map((a) => a.bumper ?? a.adId)).toEqual(['start', `ad-a-${sid}`, `ad-b-${sid}`, 'end', 'slate']);
    expect(ads[0]!.trackingEvents).toEqual([]);
    expect(ads[1]!.startOffsetSeconds).toBeCloseTo(START_BUMPER_S, 0);
    // the first ad's segments fire its own beacons (item 1: the start bumper is item 0)
    const listed = breakSegments(text);
    const fetchAll = async (adIndexes: number[]) => {
      for (const s of listed.filter((x) => adIndexes.includes(x.adIndex))) expect((await h.get(s.uri)).status).toBe(302);
    };
    await fetchAll([1]);
    await expect.poll(() => h.vast.beaconCount('complete', `a-${sid}`), { timeout: 30_000 }).toBe(1);
    // then the bumpers' segments (which fire nothing) and the second ad's
    await fetchAll([0, 3]);
    await fetchAll([2]);
    await expect.poll(() => h.vast.beaconCount('complete', `b-${sid}`), { timeout: 30_000 }).toBe(1);
    for (const ad of [`a-${sid}`, `b-${sid}`]) {
      for (const event of ['impression', 'start', 'firstQuartile', 'midpoint', 'thirdQuartile', 'complete']) expect(h.vast.beaconCount(event, ad), `${event} of ${ad}`).toBe(1);
    }
  }, 300_000);

  it('has no bumpers in a break without ads (empty VAST: slate only)', async () => {
    const guid = await configure('/empty');
    const { text } = await videoPlaylist(guid);
    const listed = breakSegments(text);
    expect(new Set(listed.map((s) => s.adIndex))).toEqual(new Set([0]));
    expect(await creativeOf(listed[0]!.uri)).toMatch(/\/slate-[^/]+\//);
    expect(text).not.toMatch(/com\.engine\.bumper/);
  }, 300_000);

  it('never plays a bumper longer than 10 s: the break opens with the ads', async () => {
    const guid = await configure('/vast4', { start: `${sideUrl}/long.mp4`, end: `${h.vast.url}/media/a.mp4` });
    const { text } = await videoPlaylist(guid);
    const seconds = items(breakSegments(text));
    // ad a, ad b, end bumper, slate: the ads were chosen with the end bumper's room only
    expect(seconds.slice(0, 3).map(([, s]) => Math.round(s))).toEqual([AD_SECONDS.a, AD_SECONDS.b, END_BUMPER_S]);
    expect(text.match(/X-BUMPER="(\w+)"/g)).toEqual(['X-BUMPER="end"']);
    const metrics = (await h.get('/metrics')).text;
    expect(metrics).toMatch(/ssai_creatives_skipped_total\{reason="bumper too long"\} [1-9]/);
  }, 300_000);

  it('answers the asset list [start bumper, ads…, end bumper, slate] with their durations (guided)', async () => {
    const guid = await configure('/vast4');
    const { url, text } = await videoPlaylist(guid, '?ads.mode=guided');
    const list = /X-ASSET-LIST="([^"]+)"/.exec(text)?.[1];
    expect(list, text).toBeDefined();
    const answer = await h.get(new URL(list!, `${h.engine.url}${url}`).toString());
    expect(answer.status).toBe(200);
    const assets = (JSON.parse(answer.text) as { ASSETS: Array<{ URI: string; DURATION: number; 'X-BUMPER'?: string; 'X-AD-ID'?: string }> }).ASSETS;
    expect(assets.map((a) => a['X-BUMPER'] ?? a['X-AD-ID'] ?? 'slate')).toEqual(['start', 'ad-a', 'ad-b', 'end', 'slate']);
    expect(assets.slice(0, 4).map((a) => Math.round(a.DURATION))).toEqual([START_BUMPER_S, AD_SECONDS.a, AD_SECONDS.b, END_BUMPER_S]);
    expect(assets.reduce((t, a) => t + a.DURATION, 0)).toBeCloseTo(BREAK_S, 0);
    // each asset plays its own creative: the start bumper's media playlist redirects to the bumper clip
    const master = await h.get(assets[0]!.URI);
    expect(master.status).toBe(200);
    const media = await h.get(new URL(master.text.split('\n').find((l) => l && !l.startsWith('#'))!, assets[0]!.URI).toString());
    const segment = media.text.split('\n').find((l) => l && !l.startsWith('#'))!;
    expect(await creativeOf(new URL(segment, assets[0]!.URI).pathname)).toMatch(/\/bumper-start-[^/]+\//);
  }, 300_000);
});
