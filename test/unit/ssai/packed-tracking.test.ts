import { deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { AvailRecord } from '../../../ssai/decide/avail-record.js';
import { adIdOf, NO_TRACKING, packRecord, packTracking, trackingOf, unpackTracking } from '../../../ssai/decide/packed-tracking.js';
import { frozenCopy } from '../../../ssai/store/session-store.js';
import type { TrackingEvents } from '../../../ssai/parse/linear-ad.js';

const sid = '0b7d5c1e-8f3a-4d2b-9c6e-1a2b3c4d5e6f';
const events = (ad: string): TrackingEvents => ({
  impression: [`http://ads.example/track/impression/${ad}-${sid}`], start: [`http://ads.example/track/start/${ad}-${sid}`],
  firstQuartile: [`http://ads.example/track/firstQuartile/${ad}-${sid}`], midpoint: [`http://ads.example/track/midpoint/${ad}-${sid}`],
  thirdQuartile: [`http://ads.example/track/thirdQuartile/${ad}-${sid}`, 'http://other.example/q3?x=1&y=é'],
  complete: [`http://ads.example/track/complete/${ad}-${sid}`], error: [`http://ads.example/track/error/${ad}-${sid}?code=[ERRORCODE]`],
});
const record = (): AvailRecord => ({
  id: 'scte-1', index: 0, startSegmentIndex: 4, endSegmentIndex: 9, duration: 10, slotDuration: 2, skipped: [],
  ads: [
    { adId: `ad-a-${sid}`, creativeId: 'cr-a', duration: 4, creativeKey: 'ka', tracking: events('a') },
    { adId: `ad-b-${sid}`, creativeId: 'cr-b', duration: 6, creativeKey: 'kb', tracking: events('b') },
    { adId: 'slate', creativeId: 'slate', duration: 0.5, creativeKey: 'ks', slate: true },
  ],
});

describe('packed tracking', () => {
  it('stores every ad\'s events in one string, several times smaller, and gives them back per ad', () => {
    const packed = packRecord(record());
    expect(packed.ads.every((a) => a.tracking === undefined)).toBe(true);
    // one character per deflated byte, all of them 0-255 (V8 keeps a byte per character)
    expect(packed.tracking!.startsWith('\u0002')).toBe(true);
    expect([...packed.tracking!].every((c) => c.charCodeAt(0) <= 0xff)).toBe(true);
    const rawLength = JSON.stringify([events('a'), events('b')]).length;
    expect(packed.tracking!.length).toBeLessThan(rawLength / 4);
    // the preset dictionary saves the first event list's skeleton and words: smaller than without it
    const withoutDictionary = deflateRawSync(JSON.stringify([events('a'), events('b')]), { windowBits: 11, memLevel: 3 }).length;
    expect(packed.tracking!.length - 1).toBeLessThan(withoutDictionary - 25);
    // as the memory store and Redis keep it: through JSON
    const stored = frozenCopy(packed) as AvailRecord;
    expect(trackingOf(stored, 0)).toEqual(events('a'));
    expect(trackingOf(stored, 1)).toEqual(events('b'));
    expect(trackingOf(stored, 2)).toEqual(NO_TRACKING);
    expect(trackingOf(stored, 3)).toEqual(NO_TRACKING);
    // the ad ids kept apart, the ads themselves the same for every viewer of these creatives: stored once
    expect(packed.ads.map((_, i) => adIdOf(stored, i))).toEqual(record().ads.map((a) => a.adId));
    expect(packed.ads.every((a) => a.adId === '')).toBe(true);
    const other = record();
    other.ads.forEach((a) => { a.adId = a.adId.replace(sid, 'another-viewer'); });
    const otherStored = frozenCopy(packRecord(other)) as AvailRecord;
    expect(otherStored.ads).toBe(stored.ads);
    expect(adIdOf(otherStored, 1)).toBe('ad-b-another-viewer');
    // a record stored before keeps its ids in its ads
    expect(adIdOf(record(), 0)).toBe(`ad-a-${sid}`);
  });

  it('leaves a record without beacons unpacked, and still reads records stored before packing', () => {
    const slateOnly: AvailRecord = { ...record(), ads: [{ adId: 'slate', creativeId: 'slate', duration: 10, creativeKey: 'ks', slate: true }] };
    expect(packRecord(slateOnly).tracking).toBeUndefined();
    expect(trackingOf(packRecord(slateOnly), 0)).toEqual(NO_TRACKING);
    const legacy = record();
    expect(trackingOf(legacy, 1)).toEqual(events('b'));
    // packed as stored before the dictionary: bytes, or base64 before the byte form
    const deflated = deflateRawSync(JSON.stringify([events('a'), events('b')]), { windowBits: 11, memLevel: 3 });
    expect(unpackTracking(`\u0001${deflated.toString('latin1')}`)?.[1]).toEqual(events('b'));
    expect(unpackTracking(deflated.toString('base64'))?.[0]).toEqual(events('a'));
  });

  it('keeps a pack made by the decision thread for the first ads in order; the slate after them has no beacons', () => {
    const decided = record();
    decided.tracking = packTracking([events('a'), events('b')]);
    const packed = packRecord(decided);
    expect(packed.tracking).toBe(decided.tracking);
    expect(packed.ads.every((a) => a.tracking === undefined)).toBe(true);
    const stored = frozenCopy(packed) as AvailRecord;
    expect(trackingOf(stored, 0)).toEqual(events('a'));
    expect(trackingOf(stored, 1)).toEqual(events('b'));
    expect(trackingOf(stored, 2)).toEqual(NO_TRACKING);
  });

  it('gives no events for a packed string it cannot read', () => {
    expect(unpackTracking('not deflate')).toBeUndefined();
    expect(unpackTracking(Buffer.from('{"a":1}').toString('base64'))).toBeUndefined();
    expect(unpackTracking(packTracking([{ ...NO_TRACKING, start: ['http://a/s'] }]))?.[0]?.start).toEqual(['http://a/s']);
    expect(trackingOf({ ads: record().ads.map(({ tracking: _t, ...a }) => a), tracking: 'garbage' }, 0)).toEqual(NO_TRACKING);
  });
});

describe('memory store copies', () => {
  it('share a repeated part between records but keep own "__proto__" keys as data', () => {
    const a = frozenCopy({ ads: [{ adId: 'x', creativeKey: 'creative-key-1' }], p: JSON.parse('{"__proto__":{"polluted":"yes"}}') }) as { ads: unknown; p: Record<string, unknown> };
    const b = frozenCopy({ ads: [{ adId: 'x', creativeKey: 'creative-key-1' }], p: {} }) as { ads: unknown };
    expect(a.ads).toBe(b.ads);
    expect(Object.getPrototypeOf(a.p)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(a.p, '__proto__')?.value).toEqual({ polluted: 'yes' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const c = frozenCopy({ ads: [{ adId: 'y', creativeKey: 'creative-key-1' }] }) as { ads: unknown };
    expect(c.ads).not.toBe(b.ads);
    expect(c.ads).toEqual([{ adId: 'y', creativeKey: 'creative-key-1' }]);
  });
});
