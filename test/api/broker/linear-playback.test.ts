// Issue 15 part 4: a virtual channel plays as live HLS assembled from its listings on the wall clock (real encodes,
// a manual clock): the right segment for now, item changes, ad cues, slate in a gap, the loop, and the same bytes
// from a second engine over the same store.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../kernel/core/clock.js';
import { scanMediaPlaylist, scanMultivariantPlaylist } from '../../../media/playlist-scanner.js';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { encodedVod, startBroker, type BrokerHarness } from './broker-helpers.js';

describe('virtual channel playback', () => {
  const clock = new ManualClock(Math.floor(Date.now() / 60_000) * 60_000);
  const T = Math.floor(clock.nowMs() / 1000) + 600; // listings start 10 minutes after the clock
  let h: BrokerHarness;
  let work: string;
  let a: string;
  let b: string;
  let channel: string;
  let playback: string;
  let second: TestEngine | undefined;

  beforeAll(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'linear-'));
    h = await startBroker({ clock });
    a = await encodedVod(h, 6, work, 'a');
    b = await encodedVod(h, 5, work, 'b');
    const playlist = (await h.engine.api('POST', '/broker/playlists', { headers: h.admin, body: {
      name: 'ab', sources: [{ guid: a, type: 'source', ads: [{ start: 4, guid: b, substitute: 0 }] }, { guid: b, type: 'source' }],
    } })).body.guid as string;
    channel = (await h.engine.api('POST', '/broker/channels', { headers: h.admin, body: { name: 'Virtual', description: '', active: 1, type: 'virtual', hasAds: 0 } })).body.guid;
    const listings = await h.engine.api('POST', '/broker/listings/multiple', { headers: h.admin, body: { channel, start: T, end: T + 90, listings: [
      { start: T, end: T + 60, title: 'the playlist', playlist }, { start: T + 60, end: T + 80, title: 'a alone', vod: a }, { start: T + 80, end: T + 90, title: 'nothing' },
    ] } });
    expect(listings.status).toBe(200);
    playback = (await h.engine.api('GET', `/broker/channels/${channel}`, { headers: h.admin })).body.data.playbackUrl;
  }, 400_000);
  afterAll(async () => {
    await second?.close();
    await h?.engine.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  const get = async (url: string) => {
    const res = await fetch(url);
    return { status: res.status, text: await res.text(), type: res.headers.get('content-type') };
  };
  const media = async (at: number, file = 'v0.m3u8') => {
    clock.set(at * 1000);
    const answer = await get(playback.replace('master.m3u8', file));
    expect(answer.status).toBe(200);
    return { text: answer.text, pl: scanMediaPlaylist(answer.text).playlist! };
  };

  it('serves a multivariant playlist with the video ladder and the audio rendition', async () => {
    const master = await get(playback);
    expect(master.status).toBe(200);
    expect(master.type).toBe('application/vnd.apple.mpegurl');
    const pl = scanMultivariantPlaylist(master.text).playlist!;
    expect(pl.variants.map((v) => v.uri)).toEqual(['v0.m3u8']);
    expect(pl.variants[0]!.resolution).toBe('160x90');
    expect(pl.renditions.map((r) => r.uri)).toEqual(['audio.m3u8']);
    expect((await get(playback.replace(/\/[^/]+\/master\.m3u8$/, '/not-the-token/master.m3u8'))).status).toBe(404);
  });

  it('plays the segment of now, with an item change, the ad cues, slate in the gap, and numbers that only grow', async () => {
    const aSegs = (await h.engine.api('GET', `/broker/vod/list/${a}`)).body.data.hls.cdnUrl as string;
    const aBase = aSegs.replace(/master\.m3u8$/, '');
    // T+10 s: a's first segment (0–4 s), the 5 s ad b (4–9 s), a resumes at 9 s: the last segment ended by now is b's last.
    const early = await media(T + 10);
    const uris = early.pl.segments.map((s) => s.uri);
    expect(uris.at(-1)).toMatch(/chunk_0_00002\.m4s$/);
    expect(uris.at(-3)).toBe(`${aBase}chunk_0_00001.m4s`);
    expect(early.text).toMatch(/#EXT-X-CUE-OUT:5\.\d{3}/);
    expect(early.pl.segments.at(-2)!.discontinuity).toBe(true);
    expect(early.pl.segments.at(-2)!.pdtMs).toBe((T + 4) * 1000);
    // the last segment starting by T+10 s is still running: not listed yet
    expect(early.pl.segments.at(-1)!.pdtMs! + early.pl.segments.at(-1)!.duration * 1000).toBeLessThanOrEqual((T + 10) * 1000 + 5);

    let lastSeq = -1;
    let lastDisc = -1;
    for (let t = T - 20; t <= T + 130; t += 3) {
      const { pl } = await media(t);
      const seq = pl.mediaSequence + pl.segments.length - 1;
      expect(seq).toBeGreaterThanOrEqual(lastSeq);
      expect(pl.discontinuitySequence).toBeGreaterThanOrEqual(lastDisc);
      lastSeq = seq;
      lastDisc = pl.discontinuitySequence;
      for (const s of pl.segments) expect(s.duration).toBeLessThanOrEqual(pl.targetDuration + 0.5);
    }
    // T+85 s: the "nothing" listing plays slate (its own segments under /media/linear-slate/)
    const gap = await media(T + 88);
    expect(gap.pl.segments.at(-1)!.uri).toContain('/media/linear-slate/v3/video_');
    const slate = await fetch(gap.pl.segments.at(-1)!.uri);
    expect(slate.status).toBe(200);
    // and a segment URL of the channel is the VOD's own, served by the media store
    expect((await fetch(early.pl.segments.at(-3)!.uri)).status).toBe(200);
    const audio = await media(T + 10, 'audio.m3u8');
    expect(audio.pl.segments.at(-3)!.uri).toBe(`${aBase}chunk_1_00001.m4s`);
    expect(audio.pl.mediaSequence).toBe(early.pl.mediaSequence);
  });

  it('replays the last hours after the last listing with loopInterval', async () => {
    const put = await h.engine.api('PUT', `/broker/channels/${channel}`, { headers: h.admin, body: { name: 'Virtual', description: '', active: 1, type: 'virtual', hasAds: 0, loopInterval: 0.025 } });
    expect(put.status).toBe(200);
    // 0.025 h = 90 s: from T+90 the channel plays T … T+90 again, so T+100 is T+10 once more
    const replay = await media(T + 100);
    const original = await media(T + 10);
    const since = (pl: typeof replay.pl, from: number) => pl.segments.filter((s) => s.pdtMs! >= from * 1000).map((s) => `${s.uri}@${s.pdtMs! - from * 1000}`);
    expect(since(replay.pl, T + 90)).toEqual(since(original.pl, T));
    expect(since(replay.pl, T + 90).length).toBeGreaterThanOrEqual(3);
    expect(replay.pl.mediaSequence).toBeGreaterThan(original.pl.mediaSequence);
  });

  it('answers the same playlist from a second engine over the same store', async () => {
    second = await startTestEngine({ clock, dataDir: h.engine.dataDir, env: { PUBLIC_URL: h.engine.ctx.config.publicUrl } });
    for (const t of [T - 5, T + 10, T + 61, T + 87, T + 200]) {
      clock.set(t * 1000);
      const path = new URL(playback).pathname.replace('master.m3u8', 'v0.m3u8');
      const one = await get(`${h.engine.url}${path}`);
      const two = await get(`${second.url}${path}`);
      expect(two.status).toBe(200);
      expect(two.text).toBe(one.text);
    }
  });
});
