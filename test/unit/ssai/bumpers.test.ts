// Bumpers (issue 31 item 3), the planning part: the ads fit the break less its bumpers, the bumpers bracket the ads
// of a filled break only, a clip longer than 10 s is never played, one not prepared yet is left out of this break.
import pino from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { AdPlanner } from '../../../ssai/decide/ad-planner.js';
import type { SessionRecord } from '../../../ssai/decide/avail-record.js';
import { bracketed, bumperRoom, unplayableBumper } from '../../../ssai/decide/bumpers.js';
import type { PrepareFn } from '../../../ssai/decide/creative-cache.js';
import type { CreativePlan } from '../../../ssai/stitch/creative-plan.js';
import type { Avail } from '../../../ssai/parse/cue-finder.js';
import type { LinearAd } from '../../../ssai/parse/linear-ad.js';
import { createSsaiMetrics } from '../../../ssai/metrics.js';
import { packTracking, trackingOf } from '../../../ssai/decide/packed-tracking.js';
import { MemorySessionStore } from '../../../ssai/store/session-store.js';

const plan = (key: string, duration: number): CreativePlan => ({ key, duration, video: [] });
const item = (adId: string, duration: number) => ({ adId, creativeId: adId, duration, creativeKey: adId });

describe('bumper planning rules', () => {
  it('leaves the ads the break less its bumpers, and a VOD insertion its whole length', () => {
    expect(bumperRoom(60, false, { start: plan('s', 3), end: plan('e', 2) })).toBe(55);
    expect(bumperRoom(60, false, { end: plan('e', 2) })).toBe(58);
    expect(bumperRoom(60, false, {})).toBe(60);
    expect(bumperRoom(120, true, { start: plan('s', 3), end: plan('e', 2) })).toBe(120);
    expect(bumperRoom(4, false, { start: plan('s', 3), end: plan('e', 2) })).toBe(0);
  });

  it('brackets the ads with the bumpers, and gives a break without ads none', () => {
    const both = { start: plan('s', 3), end: plan('e', 2) };
    const items = bracketed([item('a', 6), item('b', 4)], both);
    expect(items.map((i) => [i.adId, i.bumper, i.duration])).toEqual([['bumper-start', 'start', 3], ['a', undefined, 6], ['b', undefined, 4], ['bumper-end', 'end', 2]]);
    expect(items[0]!.creativeKey).toBe('s');
    expect(items[0]!.tracking).toBeUndefined();
    expect(bracketed([], both)).toEqual([]);
    expect(bracketed([item('a', 6)], { end: plan('e', 2) }).map((i) => i.adId)).toEqual(['a', 'bumper-end']);
  });

  it('plays a clip of up to 10 s (and its encoder rounding), not a longer one', () => {
    expect(unplayableBumper(plan('s', 10))).toBeUndefined();
    expect(unplayableBumper(plan('s', 10.043))).toBeUndefined();
    expect(unplayableBumper(plan('s', 12))).toMatch(/longer than 10 s/);
  });
});

const NO_EVENTS = { impression: [], start: [], firstQuartile: [], midpoint: [], thirdQuartile: [], complete: [], error: [] };
const ad = (id: string, seconds: number): LinearAd => ({
  adId: id, creativeId: `cr-${id}`, duration: seconds, mediaFiles: [{ url: `http://ads.test/${id}-${seconds}.mp4`, type: 'video/mp4', width: 640, height: 360, bitrate: 800 }],
  trackingEvents: { ...NO_EVENTS, impression: [`http://ads.test/imp/${id}`] },
});
const session: SessionRecord = {
  id: 's1', guid: 'g1', origin: 'http://origin.test/v0.m3u8', playerParams: {}, createdAt: 0,
  variants: [{ n: 0, kind: 'video', uri: 'http://origin.test/v0.m3u8', bandwidth: 350_000, resolution: '320x180' }],
  rungs: [{ width: 320, height: 180, bandwidth: 350_000 }],
};
/** A 30 s break of 2 s segments, from segment `start`. */
const avail = (id: string, start: number): Avail => ({
  id, startSegmentIndex: start, endSegmentIndex: start + 15, duration: 30, slotDuration: 2, durationFromCue: true, open: false,
} as Avail);

/** Prepares any media file to the length its URL names (`…-<seconds>.mp4`); `held` URLs never finish. */
function preparer(held: Set<string> = new Set()): PrepareFn {
  return async (url, _ladder, creativeId) => {
    if (held.has(url)) return new Promise(() => undefined);
    const seconds = Number(/-(\d+(?:\.\d+)?)\.mp4$/.exec(url)?.[1] ?? 6);
    return {
      ok: true,
      value: {
        creativeKey: creativeId, dir: `/media/creatives/${encodeURIComponent(url)}`, masterPath: 'master.m3u8', durationSec: seconds, cached: true,
        renditions: [{ width: 320, height: 180, bandwidth: 328_000, playlistPath: 'v0/index.m3u8', segments: [{ path: 'v0/s.m4s', duration: seconds }] }],
      },
    };
  };
}

function planner(ads: LinearAd[], prepare: PrepareFn, creativeWaitMs = 5_000): AdPlanner {
  return new AdPlanner({
    decision: { decide: async () => (ads.length ? { ok: true, ads } : { ok: false, error: { reason: 'empty', message: 'no ad' } }) },
    store: new MemorySessionStore(), prepare: () => prepare, creativeUrl: (dir, rel) => `http://media.test${dir}/${rel}`,
    metrics: createSsaiMetrics(new Registry()), logger: pino({ level: 'silent' }), now: () => Date.now(), creativeWaitMs, sessionTtlMs: 60_000,
  });
}

const BUMPERS = { bumperStartUrl: 'http://clips.test/start-3.mp4', bumperEndUrl: 'http://clips.test/end-2.mp4' };

describe('a break planned with bumpers', () => {
  it('picks the ads to fit the break less the bumpers and plays start bumper, ads, end bumper', async () => {
    // 30 s less 5 s of bumpers: 10 + 10 fit, the third 10 s ad does not (it would without the bumpers)
    const p = planner([ad('a', 10), ad('b', 10), ad('c', 10)], preparer());
    const r = await p.recordFor(session, 'http://ads.test/vast', avail('b1', 10), 2, undefined, BUMPERS);
    expect(r.ads.map((a) => [a.bumper ?? 'ad', a.duration])).toEqual([['start', 3], ['ad', 10], ['ad', 10], ['end', 2]]);
    expect(r.skipped).toEqual([{ adId: 'c', reason: 'does not fit the avail' }]);
    // 25 s of the 30 s break: the content resumes at the 13th of its 2 s segments (no slate configured)
    expect(r.endSegmentIndex).toBe(10 + 13);
    // the ads keep their tracking in their places; the bumpers have none
    expect([0, 1, 2, 3].map((i) => trackingOf(r, i).impression)).toEqual([[], ['http://ads.test/imp/a'], ['http://ads.test/imp/b'], []]);
  });

  it('keeps each ad its own beacons when the decision thread packed them (a start bumper goes before the ads)', async () => {
    const ads = [ad('a', 10), ad('b', 10)];
    const p = new AdPlanner({
      decision: { decide: async () => ({ ok: true, ads, packedTracking: packTracking(ads.map((a) => a.trackingEvents)) }) },
      store: new MemorySessionStore(), prepare: () => preparer(), creativeUrl: (dir, rel) => `http://media.test${dir}/${rel}`,
      metrics: createSsaiMetrics(new Registry()), logger: pino({ level: 'silent' }), now: () => Date.now(), creativeWaitMs: 5_000, sessionTtlMs: 60_000,
    });
    const r = await p.recordFor(session, 'http://ads.test/vast', avail('b1', 10), 2, undefined, BUMPERS);
    expect([0, 1, 2, 3].map((i) => trackingOf(r, i).impression)).toEqual([[], ['http://ads.test/imp/a'], ['http://ads.test/imp/b'], []]);
  });

  it('has no bumpers when no ad plays (empty answer, or no ad fits)', async () => {
    const empty = await planner([], preparer()).recordFor(session, 'http://ads.test/vast', avail('b1', 10), 2, undefined, BUMPERS);
    expect(empty.ads).toEqual([]);
    // a 28 s ad fits the 30 s break, not the 25 s left by the bumpers: no ad, so no bumpers either
    const none = await planner([ad('long', 28)], preparer()).recordFor(session, 'http://ads.test/vast', avail('b1', 10), 2, undefined, BUMPERS);
    expect(none.ads).toEqual([]);
  });

  it('counts the bumpers as filling the break under the personalization threshold', async () => {
    // 20 s of ads + 5 s of bumpers leave 5 s of the 30 s: personalised under a 6 s threshold (without them: 10 s left)
    const r = await planner([ad('a', 10), ad('b', 10)], preparer()).recordFor(session, 'http://ads.test/vast', avail('b1', 10), 2, undefined,
      { ...BUMPERS, personalizationThresholdSeconds: 6 });
    expect(r.unpersonalised).toBeUndefined();
    expect(r.ads).toHaveLength(4);
  });

  it('never plays a bumper longer than 10 s, and leaves out one not prepared yet', async () => {
    const long = await planner([ad('a', 10)], preparer()).recordFor(session, 'http://ads.test/vast', avail('b1', 10), 2, undefined,
      { bumperStartUrl: 'http://clips.test/start-12.mp4', bumperEndUrl: BUMPERS.bumperEndUrl });
    expect(long.ads.map((a) => a.bumper ?? 'ad')).toEqual(['ad', 'end']);
    expect(long.skipped).toEqual([{ adId: 'bumper-start', reason: 'longer than 10 s (12 s): not played' }]);
    const held = await planner([ad('a', 10)], preparer(new Set([BUMPERS.bumperEndUrl])), 50).recordFor(session, 'http://ads.test/vast', avail('b1', 10), 2, undefined, BUMPERS);
    expect(held.ads.map((a) => a.bumper ?? 'ad')).toEqual(['start', 'ad']);
    expect(held.skipped).toEqual([{ adId: 'bumper-end', reason: 'not prepared: queued for preparation' }]);
  });

  it('lengthens a VOD insertion by its bumpers', async () => {
    const insert = { ...avail('b1', 10), endSegmentIndex: 10, duration: 0, insert: true } as Avail;
    const r = await planner([ad('a', 10)], preparer()).recordFor(session, 'http://ads.test/vast', insert, 2, undefined, BUMPERS);
    expect(r.ads.map((a) => a.bumper ?? 'ad')).toEqual(['start', 'ad', 'end']);
    expect(r.duration).toBe(15);
  });
});
