// VMAP for VOD origins (issue 5 "Playback"): an ENDLIST playlist takes its avails from the ad server's VMAP breaks,
// placed by timeOffset (start, end, HH:MM:SS(.mmm), n%), each decided from its own break's VAST.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AD_SECONDS, VastServer } from '../../fixtures/vast-server.js';
import { AdPlanner } from '../../ssai/decide/ad-planner.js';
import { mediaStoreUrl } from '../../ssai/stitch/creative-plan.js';
import type { PrepareFn } from '../../ssai/decide/creative-cache.js';
import type { SessionRecord } from '../../ssai/decide/avail-record.js';
import { createSsaiMetrics } from '../../ssai/metrics.js';
import { scanMediaPlaylist, type MediaPlaylist } from '../../media/playlist-scanner.js';
import { adIdOf, trackingOf } from '../../ssai/decide/packed-tracking.js';
import { createSessionStore } from '../../ssai/store/session-store.js';
import { parseVmap, VastDecisionClient, type VmapBreak } from '../../ssai/decide/vast-decision.js';
import { availsFromVmap, fetchVmapBreaks, offsetSeconds, parseTimeOffset } from '../../ssai/decide/vmap-avails.js';
import type { PreparedCreative } from '../../vod-encoder/prepare-creative.js';

/** 10 two-second segments, no cue. */
function vod(endList = true): MediaPlaylist {
  const lines = ['#EXTM3U', '#EXT-X-VERSION:7', '#EXT-X-TARGETDURATION:2', '#EXT-X-MEDIA-SEQUENCE:0'];
  for (let k = 0; k < 10; k++) lines.push(`#EXT-X-PROGRAM-DATE-TIME:${new Date(Date.UTC(2026, 0, 5, 0, 0, k * 2)).toISOString()}`, '#EXTINF:2.000000,', `seg_${k}.m4s`);
  if (endList) lines.push('#EXT-X-ENDLIST');
  return scanMediaPlaylist(`${lines.join('\n')}\n`).playlist!;
}
const brk = (breakId: string, timeOffset: string): VmapBreak => ({ breakId, timeOffset });

describe('VMAP timeOffset', () => {
  it.each<[string, number | undefined]>([
    ['start', 0], ['end', 20], ['00:00:08.000', 8], ['00:00:07', 7], ['01:02:03.5', 3723.5], ['25%', 5], ['100%', 20], ['0%', 0],
    ['150%', undefined], ['#2', undefined], ['8', undefined], ['00:61:00', undefined], ['', undefined],
  ])('%s → %s s of 20 s', (raw, seconds) => {
    const o = parseTimeOffset(raw);
    if (seconds === undefined) expect(o).toBeUndefined();
    else expect(offsetSeconds(o!, 20)).toBeCloseTo(seconds, 6);
  });
});

describe('avails from VMAP breaks', () => {
  it('places each break on the nearest segment boundary as an insertion (post-roll after the last segment), and reports what it cannot place', () => {
    const { avails, warnings } = availsFromVmap(vod(), [
      brk('mid', '00:00:07.200'), brk('pre', 'start'), brk('three-q', '75%'), brk('post', 'end'), brk('pos', '#1'), brk('dup', '00:00:08.5'), brk('late', '00:00:19.5'),
    ]);
    // 7.2 s snaps to 8 s (segment 4), 75 % of 20 s to 14 s (segment 7), the end and 19.5 s to 20 s (after segment 9)
    expect(avails.map((a) => [a.id, a.startSegmentIndex, a.endSegmentIndex, a.contentOffsetSeconds])).toEqual([
      ['vmap-pre', 0, 0, 0], ['vmap-mid', 4, 4, 8], ['vmap-three-q', 7, 7, 14], ['vmap-post', 10, 10, 20],
    ]);
    for (const a of avails) expect(a).toMatchObject({ insert: true, open: false, durationFromCue: false, slotDuration: 2, startVisible: true });
    expect(avails[1]!.startPdtMs).toBe(Date.UTC(2026, 0, 5, 0, 0, 8));
    expect(avails[3]!.startPdtMs).toBe(Date.UTC(2026, 0, 5, 0, 0, 20));
    expect(warnings.map((w) => w.breakId).sort()).toEqual(['dup', 'late', 'pos']);
  });

  it('gives a live playlist (no ENDLIST) no VMAP avails', () => {
    expect(availsFromVmap(vod(false), [brk('pre', 'start')]).avails).toEqual([]);
  });
});

describe('VMAP through the planner', () => {
  let vast: VastServer;
  const mediaDir = mkdtempSync(path.join(os.tmpdir(), 'ssai-vmap-'));
  const session: SessionRecord = {
    id: 'session-vmap', guid: 'guid-vmap', origin: 'http://origin.test/vod/v0.m3u8', playerParams: {}, createdAt: 0,
    variants: [{ n: 0, kind: 'video', uri: 'http://origin.test/vod/v0.m3u8', bandwidth: 350_000, resolution: '320x180' }],
    rungs: [{ width: 320, height: 180, bandwidth: 350_000, frameRate: 30 }],
  };
  /** prepared creatives without ffmpeg: ad a lasts 6 s, ad b 4 s, as in the VAST */
  const fakePrepare: PrepareFn = async (_url, _ladder, creativeId) => {
    const seconds = creativeId.endsWith('b') ? AD_SECONDS.b : AD_SECONDS.a;
    const segments = Array.from({ length: seconds / 2 }, (_, i) => ({ path: `v0/seg_${i}.m4s`, duration: 2 }));
    const value: PreparedCreative = {
      creativeKey: creativeId, dir: path.join(mediaDir, 'creatives', creativeId), masterPath: 'master.m3u8', durationSec: seconds, cached: true,
      renditions: [{ width: 320, height: 180, bandwidth: 328_000, playlistPath: 'v0/index.m3u8', segments }],
      audioOnly: { bandwidth: 128_000, sampleRate: 48_000, channels: 2, playlistPath: 'audio/index.m3u8', segments },
    };
    return { ok: true, value };
  };
  const planner = () => new AdPlanner({
    decision: new VastDecisionClient(), store: createSessionStore(undefined), prepare: () => fakePrepare,
    creativeUrl: mediaStoreUrl(mediaDir, () => 'http://media.test'), metrics: createSsaiMetrics(new Registry()),
    logger: pino({ level: 'silent' }), now: () => Date.now(), creativeWaitMs: 5000, sessionTtlMs: 60_000,
  });

  beforeAll(async () => { vast = await VastServer.start(); });
  afterAll(async () => { await vast?.close(); rmSync(mediaDir, { recursive: true, force: true }); });

  it('reads the fixture VMAP: inline VAST and ad tags', async () => {
    const got = await fetchVmapBreaks(`${vast.url}/vmap?sid=[session.id]`, { sessionId: 's1', availIndex: 0, availDuration: 0 });
    expect(got.ok).toBe(true);
    const breaks = got.ok ? got.breaks : [];
    expect(breaks.map((b) => [b.breakId, b.timeOffset, Boolean(b.vastXml), b.adTagUri?.replace(vast.url, '')])).toEqual([
      ['preroll', 'start', true, undefined], ['midroll-1', '00:00:08.000', false, '/vast3'], ['midroll-2', '75%', false, '/vast4'], ['postroll', 'end', true, undefined],
    ]);
    expect(vast.requests.at(-1)!.query.get('sid')).toBe('s1');
    const notVmap = await fetchVmapBreaks(`${vast.url}/vast3`, { sessionId: 's1', availIndex: 0, availDuration: 0 });
    expect(notVmap).toMatchObject({ ok: false, reason: 'not-vmap' });
    expect(parseVmap('<VAST version="3.0"/>')).toBeUndefined();
  });

  it('derives the VOD avails once per session and decides each from its own break', async () => {
    const p = planner();
    const adServer = `${vast.url}/vmap?sid=[session.id]`;
    const before = vast.requests.length;
    const [a1, a2] = await Promise.all([p.vmapAvails(session, adServer, vod()), p.vmapAvails(session, adServer, vod())]);
    const again = await p.vmapAvails(session, adServer, vod());
    expect(vast.requests.slice(before).map((r) => r.path)).toEqual(['/vmap']); // one VMAP request per session
    expect(a1).toEqual(a2);
    expect(again).toEqual(a1);
    // start → 0, 00:00:08 → segment 4, 75 % of 20 s → segment 7, end → after the last segment: insertions
    expect(a1.map((a) => [a.id, a.startSegmentIndex, a.endSegmentIndex])).toEqual([['vmap-preroll', 0, 0], ['vmap-midroll-1', 4, 4], ['vmap-midroll-2', 7, 7], ['vmap-postroll', 10, 10]]);

    const records = [];
    for (const a of a1) records.push(await p.recordFor(session, adServer, a, 2));
    // pre-roll: the inline VAST of the VMAP (no request); mid-rolls: their own ad tags, never the VMAP URL again
    expect(vast.requests.slice(before).map((r) => r.path)).toEqual(['/vmap', '/vast3', '/vast4']);
    expect(records.map((r) => r.ads.map((_, i) => adIdOf(r, i)))).toEqual([['ad-a'], ['ad-a'], ['ad-a', 'ad-b'], ['ad-b']]);
    // An insertion replaces nothing and lasts as long as its ads.
    expect(records.map((r) => [r.startSegmentIndex, r.endSegmentIndex, r.duration, r.insert])).toEqual([[0, 0, 6, true], [4, 4, 6, true], [7, 7, 10, true], [10, 10, 4, true]]);
    expect(records.every((r) => !r.skipped.length)).toBe(true);
    expect(records.every((r) => r.ads.every((ad) => !ad.slate))).toBe(true);
    expect(trackingOf(records[0]!, 0).impression).toEqual([`${vast.url}/track/impression/a`]);
  });

  it('gives no VMAP avails when the ad server answers VAST, fails, or the playlist is live', async () => {
    const p = planner();
    expect(await p.vmapAvails({ ...session, id: 's-vast' }, `${vast.url}/vast3`, vod())).toEqual([]);
    expect(await p.vmapAvails({ ...session, id: 's-down' }, `${vast.url}/error`, vod())).toEqual([]);
    const before = vast.requests.length;
    expect(await p.vmapAvails({ ...session, id: 's-live' }, `${vast.url}/vmap`, vod(false))).toEqual([]);
    expect(vast.requests.length).toBe(before);
  });
});
