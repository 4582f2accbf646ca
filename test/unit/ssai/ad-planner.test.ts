// The planner's creative states: a failure while recording a prepared creative is a skipped ad, never a stuck
// rejection that fails every later decision naming that creative.
import pino from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { AdPlanner } from '../../../ssai/decide/ad-planner.js';
import type { PrepareFn } from '../../../ssai/decide/creative-cache.js';
import type { SessionRecord } from '../../../ssai/decide/avail-record.js';
import type { Avail } from '../../../ssai/parse/cue-finder.js';
import { createSsaiMetrics } from '../../../ssai/metrics.js';
import { MemorySessionStore } from '../../../ssai/store/session-store.js';
import type { LinearAd } from '../../../ssai/parse/linear-ad.js';

const AD: LinearAd = {
  adId: 'ad-1', creativeId: 'cr-1', duration: 6, mediaFiles: [{ url: 'http://ads.test/a.mp4', type: 'video/mp4', width: 640, height: 360, bitrate: 800 }],
  trackingEvents: { impression: [], start: [], firstQuartile: [], midpoint: [], thirdQuartile: [], complete: [], error: [] },
};
const session: SessionRecord = {
  id: 's1', guid: 'g1', origin: 'http://origin.test/v0.m3u8', playerParams: {}, createdAt: 0,
  variants: [{ n: 0, kind: 'video', uri: 'http://origin.test/v0.m3u8', bandwidth: 350_000, resolution: '320x180' }],
  rungs: [{ width: 320, height: 180, bandwidth: 350_000 }],
};
const avail = (id: string, start: number): Avail => ({
  id, startSegmentIndex: start, endSegmentIndex: start + 5, duration: 10, slotDuration: 2, durationFromCue: true, open: false,
} as Avail);

const prepare: PrepareFn = async (_url, _ladder, creativeId) => ({
  ok: true,
  value: {
    creativeKey: creativeId, dir: '/media/creatives/x', masterPath: 'master.m3u8', durationSec: 6, cached: true,
    renditions: [{ width: 320, height: 180, bandwidth: 328_000, playlistPath: 'v0/index.m3u8', segments: [{ path: 'v0/s.m4s', duration: 6 }] }],
    audioOnly: { bandwidth: 128_000, sampleRate: 48_000, channels: 2, playlistPath: 'a/index.m3u8', segments: [{ path: 'a/s.m4s', duration: 6 }] },
  },
});

describe('ad planner creatives', () => {
  it('skips the ad when its prepared plan cannot be stored, and decides later avails normally', async () => {
    const store = new MemorySessionStore();
    let failWrites = true;
    const set = store.set.bind(store);
    store.set = async (key, value, ttl) => {
      if (failWrites && key.startsWith('creative:')) throw new Error('store unavailable');
      return set(key, value, ttl);
    };
    const planner = new AdPlanner({
      decision: { decide: async () => ({ ok: true, ads: [AD] }) }, store, prepare: () => prepare,
      creativeUrl: (dir, rel) => `http://media.test${dir}/${rel}`, metrics: createSsaiMetrics(new Registry()),
      logger: pino({ level: 'silent' }), now: () => Date.now(), creativeWaitMs: 5_000, sessionTtlMs: 60_000,
    });
    const first = await planner.recordFor(session, 'http://ads.test/vast', avail('a1', 4), 2);
    expect(first.ads).toEqual([]);
    expect(first.skipped).toEqual([{ adId: 'ad-1', reason: 'failed: store unavailable' }]);
    failWrites = false;
    // The next avail is decided (the creative is in its failed state for a while), not thrown.
    const second = await planner.recordFor(session, 'http://ads.test/vast', avail('a2', 20), 2);
    expect(second.skipped[0]?.reason).toMatch(/^failed: store unavailable/);
  });
});

describe('ad planner decisions', () => {
  const plannerOver = (store: MemorySessionStore, asked: string[]) => new AdPlanner({
    decision: { decide: async (request) => { asked.push(request.adServerUrl); await new Promise((r) => setTimeout(r, 20)); return { ok: true, ads: [AD] }; } }, store, prepare: () => prepare,
    creativeUrl: (dir, rel) => `http://media.test${dir}/${rel}`, metrics: createSsaiMetrics(new Registry()),
    logger: pino({ level: 'silent' }), now: () => Date.now(), creativeWaitMs: 5_000, sessionTtlMs: 60_000,
  });

  it('decides an avail once however often it is asked at once, with a lock only where the store is shared', async () => {
    const local = new MemorySessionStore();
    const asked: string[] = [];
    const planner = plannerOver(local, asked);
    const records = await Promise.all([1, 2, 3].map(() => planner.recordFor(session, 'http://ads.test/vast', avail('d1', 4), 2)));
    expect(asked).toHaveLength(1);
    expect(new Set(records).size).toBe(1);
    expect(records[0]!.ads).toHaveLength(1);
    // a store of this process only: no other instance to lock out
    expect(await local.get('lock:s1:d1')).toBeUndefined();
    const lockKeys: string[] = [];
    // the same store presented as a shared one (as Redis is): the decision takes the lock first
    const shared = Object.assign(new MemorySessionStore(), { local: false });
    const setIfAbsent = shared.setIfAbsent.bind(shared);
    shared.setIfAbsent = async (key, value, ttl) => { if (key.startsWith('lock:')) lockKeys.push(key); return setIfAbsent(key, value, ttl); };
    const sharedRecord = await plannerOver(shared, asked).recordFor(session, 'http://ads.test/vast', avail('d1', 4), 2);
    expect(sharedRecord.ads).toHaveLength(1);
    expect(lockKeys).toHaveLength(1);
  });
});
