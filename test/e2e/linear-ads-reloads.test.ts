// Issue 26 §1: a virtual channel with ads, through its playback URL (the SSAI proxy), reload by reload over several
// breaks on a manual clock: a media sequence number, once listed, keeps its URI and its cue tags, in the channel's own
// playlist and in the stitched one, for both `substitute` values of the playlist's ad position. Segments of uneven
// length (the VODs end on short segments) and breaks announced ahead (decided in the background) are the hard cases.
import fs from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VastServer } from '../../fixtures/vast-server.js';
import { ManualClock } from '../../kernel/core/clock.js';
import { brokerPart } from '../../wiring/broker.part.js';
import { foundationPart } from '../../wiring/foundation.part.js';
import { linearPart } from '../../wiring/linear.part.js';
import { createSsaiPart } from '../../wiring/ssai.part.js';
import { vodPart } from '../../wiring/vod.part.js';
import { scanMediaPlaylist, scanMultivariantPlaylist } from '../../media/playlist-scanner.js';
import { encodedVod, type BrokerHarness } from '../api/broker/broker-helpers.js';
import { absoluteSegments } from '../helpers/hls-decode.js';
import { startTestEngine } from '../helpers/engine.js';
import { SHARED_CREATIVES } from '../ssai/setup.js';

const CUE_TAGS = new Set(['EXT-X-CUE-OUT', 'EXT-X-CUE-OUT-CONT', 'EXT-X-CUE-IN', 'EXT-X-DATERANGE', 'EXT-OATCLS-SCTE35']);

/** Remembers what each media sequence number named; `check` throws on a number that names something else now. */
class Listed {
  private readonly seen = new Map<number, string>();
  readonly ads = new Set<string>();
  check(label: string, text: string, url: string, at: number): void {
    const pl = scanMediaPlaylist(text).playlist;
    if (!pl) throw new Error(`${label}: not a media playlist at ${at}: ${text}`);
    for (const s of absoluteSegments(pl.segments, url)) {
      const tags = s.tags.filter((t) => CUE_TAGS.has(t.name)).map((t) => `#${t.name}:${t.value}`).join(' ');
      const id = `${s.uri.replace(/\/v1\/segment\/[^/]+\/[^/]+\//, '/v1/segment/…/')} ${tags}`;
      const known = this.seen.get(s.mediaSequence);
      if (known !== undefined && known !== id) throw new Error(`${label}: segment ${s.mediaSequence} changed at ${at}:\n  was ${known}\n  now ${id}\n${text}`);
      this.seen.set(s.mediaSequence, id);
      const ad = /\/v1\/segment\/[^/]+\/[^/]+\/([^/]+)\//.exec(s.uri);
      if (ad) this.ads.add(decodeURIComponent(ad[1]!));
    }
  }
}

describe('a virtual channel with ads, reload by reload through the proxy', () => {
  const clock = new ManualClock(Math.floor(Date.now() / 1000) * 1000);
  let h: BrokerHarness;
  let vast: VastServer;
  let work: string;
  let adinsert: string;
  let content: string;
  let ad: string;

  beforeAll(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'linear-ads-'));
    vast = await VastServer.start();
    const dataDir = path.join(work, 'data');
    fs.mkdirSync(path.join(dataDir, 'media'), { recursive: true });
    fs.mkdirSync(SHARED_CREATIVES, { recursive: true });
    fs.symlinkSync(SHARED_CREATIVES, path.join(dataDir, 'media', 'creatives'));
    // A short window (as a small LINEAR_WINDOW_SEGMENTS would give): breaks are announced before they are listed.
    const engine = await startTestEngine({ dataDir, clock, env: { LINEAR_WINDOW_SEGMENTS: '6' },
      parts: [foundationPart, vodPart, createSsaiPart({ creativeWaitMs: 120_000, decisionDeadlineMs: 150_000, originCacheMs: 0, ...(process.env.SSAI_TEST_CUT === '0' ? { cutBeforeUndecidedBreaks: false } : {}) }), brokerPart, linearPart] });
    const admin = { Authorization: (await engine.login()).IdToken };
    const keyUrl = (await engine.api('POST', '/broker/api-keys', { headers: admin, body: { name: 'reloads', active: true } })).body.url as string;
    const key = { 'X-Api-Key': (await engine.api('GET', `/broker/api-keys/${keyUrl.split('/').pop()}`, { headers: admin })).body.data.value as string };
    h = { engine, admin, key } as unknown as BrokerHarness;
    // 15 s of content (4, 4, 4, 3 s) and a 10 s ad position (4, 4, 2 s): uneven segments around every break.
    content = await encodedVod(h, 15, work, 'content');
    ad = await encodedVod(h, 10, work, 'ad');
    adinsert = (await engine.api('POST', '/broker/adinserts', { headers: admin, body: {
      name: 'linear ads', type: 'live', ad_server: `${vast.url}/vast3?sid=[session.id]`, source_url: `${engine.ctx.config.publicUrl}/linear/`,
    } })).body.guid as string;
  }, 400_000);

  afterAll(async () => {
    await h?.engine.close();
    await vast?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it.each([0, 1] as const)('never renames a listed segment nor changes its cue tags (substitute %i)', async (substitute) => {
    const { engine, admin } = h;
    const made = await engine.api('POST', '/broker/playlists', { headers: admin, body: {
      name: `with ads ${substitute}`, sources: [{ guid: content, type: 'source', ads: [{ start: 4, guid: ad, substitute }] }],
    } });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const playlist = made.body.guid as string;
    const channel = (await engine.api('POST', '/broker/channels', { headers: admin, body: {
      name: `ads ${substitute}`, description: '', active: 1, type: 'virtual', hasAds: 1, adinsert,
    } })).body.guid as string;
    const start = Math.floor(clock.nowMs() / 1000) + 10;
    const put = await engine.api("POST", "/broker/listings/multiple", { headers: admin, body: { channel, start, end: start + 3600, listings: [{ start, end: start + 3600, title: "films", playlist }] } });
    expect(put.status).toBe(200);
    const playback = (await engine.api('GET', `/broker/channels/${channel}`, { headers: admin })).body.data.playbackUrl as string;
    const origin = `${engine.url}/linear/${playback.split(`/v1/master/${adinsert}/`)[1]!}`;

    clock.set((start + 40) * 1000);
    const master = scanMultivariantPlaylist(await (await fetch(playback)).text()).playlist!;
    const stitched = [master.variants[0]!.uri, master.renditions.find((r) => r.type === 'AUDIO')!.uri!].map((u) => new URL(u, playback).href);
    const own = ['v0.m3u8', 'audio.m3u8'].map((f) => origin.replace('master.m3u8', f));
    const lists = [...stitched, ...own].map(() => new Listed());
    // Steps of 1 to 3 s through about five breaks (one every 14 s with substitute 1, 25 s with 0).
    let step = 0;
    while (clock.nowMs() < (start + 150) * 1000) {
      const at = clock.nowMs();
      const urls = [...stitched, ...own];
      const texts = await Promise.all(urls.map(async (u) => {
        const res = await fetch(u);
        expect(res.status, u).toBe(200);
        return res.text();
      }));
      texts.forEach((text, i) => lists[i]!.check(i < 2 ? `stitched ${i}` : `channel ${i - 2}`, text, urls[i]!, at));
      clock.set(at + 1000 + (step++ % 3) * 1000);
    }
    // Breaks were stitched in both renditions (several, each once decided), the channel's own playlists list none.
    const sid = stitched[0]!.split('/')[6];
    expect(lists[0]!.ads.size, `${stitched[0]}: ${await (await fetch(`${engine.url}/v1/tracking/${adinsert}/${sid}`)).text()}`).toBeGreaterThanOrEqual(3);
    expect([...lists[1]!.ads].sort()).toEqual([...lists[0]!.ads].sort());
    expect(lists[2]!.ads.size + lists[3]!.ads.size).toBe(0);
  }, 400_000);
});
