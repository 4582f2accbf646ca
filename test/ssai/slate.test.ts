// Slate (issue 5 "Ad decisions"): the part of an avail the ads leave is filled with the configuration's slate_ad image
// turned into video by the encoder's prepareSlate; without a slate, or while it is not prepared, the content resumes.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdPlanner, type AdPlannerDeps } from '../../ssai/decide/ad-planner.js';
import { closestTrack, mediaStoreUrl } from '../../ssai/stitch/creative-plan.js';
import { SLATE_AD_ID, type PrepareSlateFn } from '../../ssai/decide/slate-fill.js';
import type { PrepareFn } from '../../ssai/decide/creative-cache.js';
import type { SessionRecord } from '../../ssai/decide/avail-record.js';
import { findAvails, type Avail } from '../../ssai/parse/cue-finder.js';
import { stitchMediaPlaylist, type PlannedAd } from '../../ssai/stitch/manifest-rewriter.js';
import { createSsaiMetrics } from '../../ssai/metrics.js';
import { scanMediaPlaylist } from '../../media/playlist-scanner.js';
import { adIdOf, trackingOf } from '../../ssai/decide/packed-tracking.js';
import { createSessionStore, type SessionStore } from '../../ssai/store/session-store.js';
import { localSlatePreparer, slateImageFrom } from '../../ssai/decide/slate.js';
import type { AdDecisionClient, AdDecisionResult } from '../../ssai/decide/vast-decision.js';
import { PREROLL_AVAIL_ID, prerollPlace } from '../../ssai/decide/live-preroll.js';
import type { LinearAd } from '../../ssai/parse/linear-ad.js';
import type { PreparedCreative } from '../../vod-encoder/prepare-creative.js';

const MEDIA_BASE = 'http://media.test';
const SLOT = 2;

function ffmpeg(args: string[]): Promise<string> {
  return new Promise((resolve) => {
    execFile('ffmpeg', ['-hide_banner', '-nostdin', '-v', 'error', ...args], { maxBuffer: 8 * 1024 * 1024 }, (err, _o, stderr) => resolve(err ? `${err.message}\n${stderr}` : stderr));
  });
}

/** A VOD playlist of 10 two-second segments with a 10 s break over segments 4–8. */
function contentPlaylist(): string {
  const lines = ['#EXTM3U', '#EXT-X-VERSION:7', `#EXT-X-TARGETDURATION:${SLOT}`, '#EXT-X-MEDIA-SEQUENCE:0', '#EXT-X-PLAYLIST-TYPE:VOD', '#EXT-X-MAP:URI="init.mp4"'];
  for (let k = 0; k < 10; k++) {
    if (k === 4) lines.push('#EXT-X-CUE-OUT:10');
    if (k === 9) lines.push('#EXT-X-CUE-IN');
    lines.push(`#EXT-X-PROGRAM-DATE-TIME:${new Date(Date.UTC(2026, 0, 5, 0, 0, k * SLOT)).toISOString()}`, `#EXTINF:${SLOT}.000000,`, `seg_${k}.m4s`);
  }
  lines.push('#EXT-X-ENDLIST');
  return `${lines.join('\n')}\n`;
}

const AD: LinearAd = {
  adId: 'ad-1', creativeId: 'cr-1', duration: 6, mediaFiles: [{ url: 'http://ads.test/a.mp4', type: 'video/mp4', width: 640, height: 360, bitrate: 800 }],
  trackingEvents: { impression: ['http://ads.test/i'], start: [], firstQuartile: [], midpoint: [], thirdQuartile: [], complete: [], error: [] },
};

describe('slate fills the rest of an avail', () => {
  let mediaDir = '';
  let image = '';
  let avail: Avail;
  const session: SessionRecord = {
    id: 'session-1', guid: 'guid-slate', origin: 'http://origin.test/vod/v0.m3u8', playerParams: {}, createdAt: 0,
    variants: [{ n: 0, kind: 'video', uri: 'http://origin.test/vod/v0.m3u8', bandwidth: 350_000, resolution: '320x180' }],
    rungs: [{ width: 320, height: 180, bandwidth: 350_000, frameRate: 30 }],
  };

  /** a prepared 6 s ad without running ffmpeg (the ad's media is not under test here) */
  const fakePrepare: PrepareFn = async (_url, _ladder, creativeId) => {
    const dir = path.join(mediaDir, 'creatives', creativeId);
    const segments = [0, 1, 2].map((i) => ({ path: `v0/seg_${i}.m4s`, duration: 2 }));
    const value: PreparedCreative = {
      creativeKey: creativeId, dir, masterPath: 'master.m3u8', durationSec: 6, cached: true,
      renditions: [{ width: 320, height: 180, bandwidth: 328_000, playlistPath: 'v0/index.m3u8', segments, initSegment: 'v0/init_0.mp4' }],
      audioOnly: { bandwidth: 128_000, sampleRate: 48_000, channels: 2, playlistPath: 'audio/index.m3u8', segments: segments.map((s) => ({ ...s, path: s.path.replace('v0', 'audio') })), initSegment: 'audio/init.mp4' },
    };
    return { ok: true, value };
  };

  function planner(opts: { slate?: string; prepareSlate?: PrepareSlateFn; decision?: AdDecisionResult; waitMs?: number; store?: SessionStore }): AdPlanner {
    const decision: AdDecisionClient = { decide: async () => opts.decision ?? { ok: true, ads: [AD] } };
    const deps: AdPlannerDeps = {
      decision, store: opts.store ?? createSessionStore(undefined), prepare: () => fakePrepare,
      creativeUrl: mediaStoreUrl(mediaDir, () => MEDIA_BASE), metrics: createSsaiMetrics(new Registry()),
      logger: pino({ level: 'silent' }), now: () => Date.now(), creativeWaitMs: opts.waitMs ?? 120_000, sessionTtlMs: 60_000,
      slateImage: slateImageFrom({ get: async (guid) => (guid === session.guid && opts.slate ? { slateAd: opts.slate } as never : undefined) }),
      ...(opts.prepareSlate ? { prepareSlate: () => opts.prepareSlate } : {}),
    };
    return new AdPlanner(deps);
  }

  beforeAll(async () => {
    mediaDir = mkdtempSync(path.join(os.tmpdir(), 'ssai-slate-'));
    mkdirSync(path.join(mediaDir, 'creatives'), { recursive: true });
    image = path.join(mediaDir, 'slate.png');
    expect(await ffmpeg(['-f', 'lavfi', '-i', 'color=c=navy:s=640x360', '-frames:v', '1', image])).toBe('');
    avail = findAvails(scanMediaPlaylist(contentPlaylist()).playlist!).avails[0]!;
    expect(avail).toMatchObject({ startSegmentIndex: 4, endSegmentIndex: 9, duration: 10, durationFromCue: true });
  });
  afterAll(() => rmSync(mediaDir, { recursive: true, force: true }));

  it('plans the 6 s ad then 4 s of slate matching the ladder, with no beacons, and the break lasts the whole avail', async () => {
    const p = planner({ slate: image, prepareSlate: localSlatePreparer({ cacheDir: path.join(mediaDir, 'creatives'), preset: 'ultrafast' }) });
    const record = await p.recordFor(session, 'http://ads.test/vast', avail, SLOT);
    expect(record.ads.map((_, i) => adIdOf(record, i))).toEqual(['ad-1', SLATE_AD_ID]);
    const slate = record.ads[1]!;
    expect(slate.slate).toBe(true);
    expect(slate.duration).toBeCloseTo(4, 2);
    expect(Object.values(trackingOf(record, 1)).flat()).toEqual([]);
    expect(record.endSegmentIndex).toBe(9); // content resumes at the CUE-IN, not after the ad
    expect(record.skipped).toEqual([]);

    // The slate is real video of the ladder: 320x180 renditions, audio, decodable, 4 s long.
    const plan = (await p.plan(slate.creativeKey))!;
    expect(plan.video.map((t) => `${t.width}x${t.height}`)).toEqual(['320x180']);
    expect(plan.audio?.segments.length).toBeGreaterThan(0);
    const track = closestTrack(plan, session.variants[0]!)!;
    expect(track.segments.reduce((s, x) => s + x.duration, 0)).toBeCloseTo(4, 1);
    const file = (u: string) => path.join(mediaDir, ...decodeURIComponent(u.slice(MEDIA_BASE.length + 1)).split('/'));
    const bytes = await Promise.all([track.mapUri!, ...track.segments.map((s) => s.uri)].map((u) => readFile(file(u))));
    await writeFile(path.join(mediaDir, 'slate-v0.mp4'), Buffer.concat(bytes));
    expect(await ffmpeg(['-i', path.join(mediaDir, 'slate-v0.mp4'), '-f', 'null', '-'])).toBe('');

    // Stitched: the ad gets its DATERANGE, the slate does not; the break spans the five content slots.
    const ads: PlannedAd[] = [];
    for (const [i, a] of record.ads.entries()) {
      const t = closestTrack((await p.plan(a.creativeKey))!, session.variants[0]!)!;
      ads.push({ id: adIdOf(record, i), duration: a.duration, segments: t.segments, ...(t.mapUri ? { mapUri: t.mapUri } : {}), ...(a.slate ? { slate: true } : {}) });
    }
    const stitched = stitchMediaPlaylist(scanMediaPlaylist(contentPlaylist()).playlist!, {
      originUrl: 'http://origin.test/vod/v0.m3u8', trackKind: 'video',
      avails: [{ id: record.id, startSegmentIndex: record.startSegmentIndex, endSegmentIndex: record.endSegmentIndex, duration: record.duration, slotDuration: record.slotDuration, ads, ...(record.startPdtMs !== undefined ? { startPdtMs: record.startPdtMs } : {}) }],
    }).text;
    expect(stitched.match(/CLASS="com.engine.ad"/g)).toHaveLength(1);
    const segs = scanMediaPlaylist(stitched).playlist!.segments;
    const slateSegs = segs.filter((s) => s.uri.includes('slate'));
    expect(slateSegs.reduce((s, x) => s + x.duration, 0)).toBeCloseTo(4, 1);
    expect(segs.at(-1)!.uri).toBe('http://origin.test/vod/seg_9.m4s');
    expect(segs.some((s) => /seg_[5-8]\.m4s$/.test(s.uri))).toBe(false);
  }, 90_000);

  it('fills the whole avail with slate when the ad server fails', async () => {
    const p = planner({ slate: image, prepareSlate: localSlatePreparer({ cacheDir: path.join(mediaDir, 'creatives'), preset: 'ultrafast' }), decision: { ok: false, error: { reason: 'timeout', message: 'slow' } } });
    const record = await p.recordFor(session, 'http://ads.test/vast', avail, SLOT);
    expect(record.error).toMatch(/^timeout/);
    expect(record.ads).toHaveLength(1);
    expect(record.ads[0]).toMatchObject({ slate: true });
    expect(adIdOf(record, 0)).toBe(SLATE_AD_ID);
    expect(record.ads[0]!.duration).toBeCloseTo(10, 2);
    expect(record.endSegmentIndex).toBe(9);
  }, 90_000);

  it('plays no slate after a live pre-roll, nor for a failed one: the content resumes when its ads end (issue 31)', async () => {
    const prepareSlate = localSlatePreparer({ cacheDir: path.join(mediaDir, 'creatives'), preset: 'ultrafast' });
    const live = scanMediaPlaylist(contentPlaylist().replace('#EXT-X-PLAYLIST-TYPE:VOD\n', '').replace('#EXT-X-ENDLIST\n', '')).playlist!;
    const place = prerollPlace({ ...live, segments: live.segments.slice(0, 4) }, [], 10);
    expect(place).toMatchObject({ avail: { id: PREROLL_AVAIL_ID, startSegmentIndex: 1, duration: 10 } });
    const preroll = (place as { avail: Avail }).avail;
    const filled = await planner({ slate: image, prepareSlate }).recordFor(session, 'http://ads.test/pre', preroll, SLOT);
    expect(filled.ads.map((_, i) => adIdOf(filled, i))).toEqual(['ad-1']);
    expect(filled.endSegmentIndex).toBe(1 + 3);
    const failed = await planner({ slate: image, prepareSlate, decision: { ok: false, error: { reason: 'timeout', message: 'slow' } } })
      .recordFor(session, 'http://ads.test/pre', preroll, SLOT);
    expect(failed.ads).toEqual([]);
    expect(failed.endSegmentIndex).toBe(failed.startSegmentIndex);
  }, 90_000);

  it('keeps today\'s behaviour without a slate_ad: the content resumes when the ads end', async () => {
    const p = planner({ prepareSlate: () => { throw new Error('must not be called'); } });
    const record = await p.recordFor(session, 'http://ads.test/vast', avail, SLOT);
    expect(record.ads.map((_, i) => adIdOf(record, i))).toEqual(['ad-1']);
    expect(record.endSegmentIndex).toBe(4 + 3);
    expect(record.skipped).toEqual([]);
  });

  it('keeps today\'s behaviour while the slate is not prepared, and records why', async () => {
    let release: () => void = () => undefined;
    const slow: PrepareSlateFn = () => new Promise((r) => { release = () => r({ ok: false, error: { code: 'VOD_CREATIVE_TRANSCODE_FAILED', message: 'x', reason: 'stopped' } }); });
    const p = planner({ slate: `${image}?other`, prepareSlate: slow, waitMs: 50 });
    const record = await p.recordFor(session, 'http://ads.test/vast', avail, SLOT);
    release();
    expect(record.ads.map((_, i) => adIdOf(record, i))).toEqual(['ad-1']);
    expect(record.endSegmentIndex).toBe(7);
    expect(record.skipped).toEqual([{ adId: SLATE_AD_ID, reason: 'slate not prepared: queued for preparation' }]);
  });

  it('keeps today\'s behaviour when no encoder can prepare the slate', async () => {
    const p = planner({ slate: image });
    const record = await p.recordFor(session, 'http://ads.test/vast', avail, SLOT);
    expect(record.ads.map((_, i) => adIdOf(record, i))).toEqual(['ad-1']);
    expect(record.skipped).toEqual([{ adId: SLATE_AD_ID, reason: 'slate not prepared: no encoder available' }]);
  });
});
