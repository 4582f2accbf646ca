import { Redis } from 'ioredis';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { keys } from '../../../ssai/decide/avail-record.js';
import { frozenCopy, MemorySessionStore, RedisSessionStore } from '../../../ssai/store/session-store.js';
import { deleteRedisPrefix, REDIS_URL, redisAvailable, testRedisPrefix } from '../../helpers/redis.js';

/** A live break long out of the window as retired() keeps it: the same for every viewer given the same creatives. */
const retiredBreak = { id: 'splice-7', index: 1, startSegmentIndex: 40, endSegmentIndex: 45, duration: 10, slotDuration: 2, ads: [{ adId: '', creativeId: '', duration: 6, creativeKey: 'cr-a-0123456789abcdef-01234567' }, { adId: '', creativeId: '', duration: 4, creativeKey: 'cr-b-0123456789abcdef-01234567' }], skipped: [], retired: true, startPdtMs: 1767571408000 };

describe('memory session store values', () => {
  it('reads back falsy values and null as stored, and undefined as absent (as Redis through JSON)', async () => {
    const store = new MemorySessionStore();
    for (const [key, value] of [['zero', 0], ['empty', ''], ['no', false], ['null', null]] as const) {
      await store.set(key, value, 600_000);
      expect(await store.get(key)).toBe(value);
    }
    await store.set('gone', { a: 1 }, 600_000);
    await store.set('gone', undefined, 600_000);
    expect(await store.get('gone')).toBeUndefined();
    expect(await store.setIfAbsent('null', 5, 600_000)).toEqual({ value: null, created: false });
    expect(await store.setIfAbsent('lock', 0, 1000)).toEqual({ value: 0, created: true });
    expect((await store.setIfAbsent('lock', 1, 1000)).value).toBe(0);
    await store.close();
  });

  it('hands out without a wait (getNow) what get() answers: the same frozen value, absent as undefined', async () => {
    const store = new MemorySessionStore();
    await store.set(keys.observed('s1', 0), [['dr-1', [4, 7]]], 600_000);
    await store.set('lock:s1:dr-1', 3, 1000); // a short-lived key
    await store.set(keys.session('s1'), { id: 's1' }, 600_000);
    for (const key of [keys.observed('s1', 0), 'lock:s1:dr-1', keys.session('s1'), keys.observed('s1', 1), 'nothing']) {
      expect(store.getNow(key), key).toBe(await store.get(key));
    }
    expect(store.getNow(keys.observed('s1', 1))).toBeUndefined();
    expect(Object.isFrozen(store.getNow(keys.observed('s1', 0)))).toBe(true);
    await store.close();
  });
});

const deepFrozen = (v: unknown): boolean => v === null || typeof v !== 'object' || (Object.isFrozen(v) && Object.values(v).every(deepFrozen));

describe('frozenCopy (what both stores keep and hand out)', () => {
  // The sharing check composes each value's JSON text from its parts' (so a large value is never stringified whole):
  // a text that differed from JSON.stringify's would share nothing, and a wrong one would share unequal values.
  it('gives a frozen copy JSON-equal to any value, one object for equal values up to 512 characters of JSON, never for larger', () => {
    fc.assert(fc.property(fc.jsonValue({ maxDepth: 3 }), fc.boolean(), (value, padded) => {
      const v = padded ? { pad: 'p'.repeat(300), value } : value;
      const text = JSON.stringify(v);
      const one = frozenCopy(v);
      expect(JSON.stringify(one)).toBe(text);
      expect(deepFrozen(one)).toBe(true);
      const again = frozenCopy(JSON.parse(text));
      if (one !== null && typeof one === 'object') {
        if (text.length <= 512) expect(again).toBe(one);
        else expect(again).not.toBe(one);
      }
    }), { numRuns: 300 });
  });

  it('shares the small parts of a large value, and keeps strings with quotes, escapes and a __proto__ key as they were', () => {
    const small = { url: 'https://t.example/imp?a="1"&b=\\n\u2028', n: -0, list: [1.5e-7, true, null, 'é'] };
    const large = { big: 'x'.repeat(600), small };
    const a = frozenCopy(large) as typeof large;
    const b = frozenCopy(JSON.parse(JSON.stringify(large))) as typeof large;
    expect(a).not.toBe(b);
    expect(a.small).toBe(b.small);
    expect(a.small).toBe(frozenCopy(small));
    const proto = JSON.parse('{"__proto__": {"x": 1}, "y": 2}') as Record<string, unknown>;
    const copy = frozenCopy(proto) as Record<string, unknown>;
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(JSON.stringify(copy)).toBe('{"__proto__":{"x":1},"y":2}');
  });
});

describe('memory session store: a session\'s keys in one entry', () => {
  const sid = '0b7d5c1e-8f3a-4d2b-9c6e-1a2b3c4d5e6f';
  const other = 'e1f2a3b4-0000-4d2b-9c6e-1a2b3c4d5e6f';

  it('reads, replaces and removes each key of a session on its own, lists apart from values, one entry per session', async () => {
    const store = new MemorySessionStore();
    await store.set(keys.session(sid), { id: sid }, 600_000);
    await store.set(keys.avail(sid, 'dr-1'), { id: 'dr-1', n: 1 }, 600_000);
    await store.set(keys.avail(sid, 'dr-2'), { id: 'dr-2' }, 600_000);
    await store.set(keys.avail(other, 'dr-1'), { id: 'dr-1', n: 2 }, 600_000);
    await store.push(keys.availList(sid), 'dr-1', 600_000);
    await store.push(keys.availList(sid), 'dr-2', 600_000);
    await store.push(keys.availList(sid), 'dr-1', 600_000);
    expect(await store.get(keys.session(sid))).toEqual({ id: sid });
    expect(await store.get(keys.avail(sid, 'dr-1'))).toEqual({ id: 'dr-1', n: 1 });
    expect(await store.get(keys.avail(other, 'dr-1'))).toEqual({ id: 'dr-1', n: 2 });
    expect(await store.list(keys.availList(sid))).toEqual(['dr-1', 'dr-2', 'dr-1']);
    expect(await store.get(keys.availList(sid))).toBeUndefined(); // a list is not a value, as in Redis
    expect(await store.list(keys.availList(other))).toEqual([]);
    await store.set(keys.avail(sid, 'dr-1'), { id: 'dr-1', n: 3 }, 600_000);
    expect(await store.get(keys.avail(sid, 'dr-1'))).toEqual({ id: 'dr-1', n: 3 });
    await store.set(keys.avail(sid, 'dr-2'), undefined, 600_000);
    expect(await store.get(keys.avail(sid, 'dr-2'))).toBeUndefined();
    expect(await store.setIfAbsent(keys.avail(sid, 'dr-1'), { id: 'x' }, 600_000)).toEqual({ value: { id: 'dr-1', n: 3 }, created: false });
    expect((await store.setIfAbsent(`beacon:${sid}:dr-1:0:start`, 1, 600_000)).created).toBe(true);
    expect((await store.setIfAbsent(`beacon:${sid}:dr-1:0:start`, 1, 600_000)).created).toBe(false);
    // a short-lived key of a session (a decision lock) is kept apart and expires on its own
    expect((await store.setIfAbsent(keys.lock(sid, 'dr-3'), 1, 5000)).created).toBe(true);
    expect((await store.setIfAbsent(keys.lock(sid, 'dr-3'), 1, 5000)).created).toBe(false);
    // two sessions, a lock: three entries, however many keys each session has
    expect(store.size).toBe(3);
    await store.close();
  });

  it('holds a small value equal under several keys once (a retired break of many viewers), a large one per key', async () => {
    const store = new MemorySessionStore();
    await store.set('avail:viewer-1:splice-7', retiredBreak, 60_000 * 5);
    await store.set('avail:viewer-2:splice-7', { ...retiredBreak }, 60_000 * 5);
    const one = await store.get<typeof retiredBreak>('avail:viewer-1:splice-7');
    expect(one).toEqual(retiredBreak);
    expect(await store.get('avail:viewer-2:splice-7')).toBe(one);
    expect(Object.isFrozen(one)).toBe(true);
    const live = { ...retiredBreak, retired: undefined, tracking: 'x'.repeat(600) };
    await store.set('avail:viewer-1:splice-8', live, 60_000 * 5);
    await store.set('avail:viewer-2:splice-8', live, 60_000 * 5);
    const a = await store.get('avail:viewer-1:splice-8');
    expect(a).toEqual(await store.get('avail:viewer-2:splice-8'));
    expect(a).not.toBe(await store.get('avail:viewer-2:splice-8'));
  });

  it('deletes values of a session, of no session and of a short TTL, leaving the rest', async () => {
    const store = new MemorySessionStore();
    await store.set('session:v1', { id: 'v1' }, 600_000);
    await store.setIfAbsent('beacon:v1:dr-1:0:start', 1, 600_000);
    await store.set('layout:abc', { variants: [] }, 600_000);
    await store.setIfAbsent('lock:v1:dr-1', 1, 5000);
    await store.delete(['beacon:v1:dr-1:0:start', 'layout:abc', 'lock:v1:dr-1', 'beacon:v1:never-set']);
    expect(await store.get('beacon:v1:dr-1:0:start')).toBeUndefined();
    expect(await store.get('layout:abc')).toBeUndefined();
    expect(await store.get('lock:v1:dr-1')).toBeUndefined();
    expect(await store.get('session:v1')).toEqual({ id: 'v1' });
    expect((await store.setIfAbsent('beacon:v1:dr-1:0:start', 1, 600_000)).created).toBe(true);
  });

  it('keeps a session while its longest-lived key lives', async () => {
    const store = new MemorySessionStore();
    await store.set(keys.session(sid), { id: sid }, 120_000);
    await store.set(keys.avail(sid, 'dr-1'), { id: 'dr-1' }, 61_000);
    const lru = (store as unknown as { groups: { getRemainingTTL(k: string): number } }).groups;
    expect(lru.getRemainingTTL(sid)).toBeGreaterThan(100_000);
    await store.close();
  });
});

describe('Redis session store', () => {
  it('hands out frozen values, a small one equal under several keys as one object (a retired break of many viewers)', async (ctx) => {
    if (!(await redisAvailable())) return ctx.skip();
    const prefix = testRedisPrefix('store-shared');
    const store = new RedisSessionStore(REDIS_URL, prefix);
    try {
      await store.set('avail:viewer-1:splice-7', retiredBreak, 60_000);
      await store.set('avail:viewer-2:splice-7', { ...retiredBreak }, 60_000);
      const one = await store.get<typeof retiredBreak>('avail:viewer-1:splice-7');
      expect(one).toEqual(retiredBreak);
      expect(Object.isFrozen(one) && Object.isFrozen(one?.ads[0])).toBe(true);
      expect(await store.get('avail:viewer-2:splice-7')).toBe(one);
      // a live break with its viewer's beacons is too large to be looked up: each read is its own
      const live = { ...retiredBreak, retired: undefined, tracking: 'x'.repeat(600) };
      await store.set('avail:viewer-1:splice-8', live, 60_000);
      const a = await store.get('avail:viewer-1:splice-8');
      expect(a).toEqual(JSON.parse(JSON.stringify(live)));
      expect(a).not.toBe(await store.get('avail:viewer-1:splice-8'));
    } finally {
      await store.close();
      await deleteRedisPrefix(prefix);
    }
  });

  it('deletes several keys at once, leaving the rest', async (ctx) => {
    if (!(await redisAvailable())) return ctx.skip();
    const prefix = testRedisPrefix('store-delete');
    const store = new RedisSessionStore(REDIS_URL, prefix);
    try {
      await store.set('beacon:v1:dr-1:0:start', 1, 60_000);
      await store.set('beacon:v1:dr-1:0:complete', 1, 60_000);
      await store.set('session:v1', { id: 'v1' }, 60_000);
      await store.delete(['beacon:v1:dr-1:0:start', 'beacon:v1:dr-1:0:complete', 'beacon:v1:never-set']);
      await store.delete([]);
      expect(await store.get('beacon:v1:dr-1:0:start')).toBeUndefined();
      expect(await store.get('beacon:v1:dr-1:0:complete')).toBeUndefined();
      expect(await store.get('session:v1')).toEqual({ id: 'v1' });
    } finally {
      await store.close();
      await deleteRedisPrefix(prefix);
    }
  });

  it('keeps only the newest entries of a capped list, with its TTL', async (ctx) => {
    if (!(await redisAvailable())) return ctx.skip();
    const prefix = testRedisPrefix('store-capped');
    const store = new RedisSessionStore(REDIS_URL, prefix);
    const memory = new MemorySessionStore();
    try {
      for (const s of [store, memory]) {
        for (const v of ['1', '2', '3', '4']) await s.push('debug:g:v1', v, 60_000, 3);
        expect(await s.list('debug:g:v1')).toEqual(['2', '3', '4']);
      }
      const client = new Redis(REDIS_URL);
      try {
        expect(await client.pttl(`${prefix}debug:g:v1`)).toBeGreaterThan(50_000);
      } finally {
        client.disconnect();
      }
    } finally {
      await store.close();
      await deleteRedisPrefix(prefix);
    }
  });

  it('marks each bit of a break\'s mark set once, across two clients, and forgets the set with its key', async (ctx) => {
    if (!(await redisAvailable())) return ctx.skip();
    const prefix = testRedisPrefix('store-marks');
    const one = new RedisSessionStore(REDIS_URL, prefix);
    const two = new RedisSessionStore(REDIS_URL, prefix);
    try {
      const wins = await Promise.all([0, 5, 30].flatMap((bit) => [one.markOnce('beacon:v1:dr-1', bit, 60_000), two.markOnce('beacon:v1:dr-1', bit, 60_000)]));
      // each bit won by exactly one of the two clients
      expect([0, 1, 2].map((i) => Number(wins[2 * i]) + Number(wins[2 * i + 1]))).toEqual([1, 1, 1]);
      expect(await two.markOnce('beacon:v1:dr-1', 0, 60_000)).toBe(false);
      expect(await one.markOnce('beacon:v1:dr-1', 7, 60_000)).toBe(true);
      await one.delete(['beacon:v1:dr-1']);
      expect(await two.markOnce('beacon:v1:dr-1', 5, 60_000)).toBe(true);
      await expect(one.markOnce('beacon:v1:dr-1', 31, 60_000)).rejects.toThrow(RangeError);
    } finally {
      await one.close();
      await two.close();
      await deleteRedisPrefix(prefix);
    }
  });
});

describe('memory session store marks', () => {
  it('marks each bit once, keeps the set with its session, and forgets it on delete', async () => {
    const store = new MemorySessionStore();
    expect(await store.markOnce('beacon:v1:dr-1', 0, 600_000)).toBe(true);
    expect(await store.markOnce('beacon:v1:dr-1', 0, 600_000)).toBe(false);
    expect(await store.markOnce('beacon:v1:dr-1', 30, 600_000)).toBe(true);
    expect(await store.get('beacon:v1:dr-1')).toBe(1 + 2 ** 30);
    await store.set('session:v1', { id: 'v1' }, 600_000);
    expect(store.size).toBe(1); // the marks live in the session's entry
    await store.delete(['beacon:v1:dr-1']);
    expect(await store.markOnce('beacon:v1:dr-1', 0, 600_000)).toBe(true);
    await expect(store.markOnce('beacon:v1:dr-1', -1, 600_000)).rejects.toThrow(RangeError);
    await store.close();
  });

  it('marks without a wait (markOnceNow) into the same set, its session\'s other values untouched', async () => {
    const store = new MemorySessionStore();
    await store.set('session:v1', { id: 'v1' }, 600_000);
    await store.set('avail:v1:dr-1', { id: 'dr-1' }, 600_000);
    // bits set the one way are seen the other way, for a new mark set and one already there
    fc.assert(fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 30 }), fc.boolean(), fc.constantFrom('dr-1', 'dr-2')), { maxLength: 40 }), (steps) => {
      const seen = new Map<string, Set<number>>();
      const prefix = `m${Math.random().toString(36).slice(2)}`;
      for (const [bit, now, brk] of steps) {
        const key = `beacon:v1:${prefix}-${brk}`;
        const set = seen.get(key) ?? new Set<number>();
        seen.set(key, set);
        const fresh = !set.has(bit);
        set.add(bit);
        if (now) expect(store.markOnceNow(key, bit, 600_000)).toBe(fresh);
        else void store.markOnce(key, bit, 600_000).then((won) => expect(won).toBe(fresh));
        expect(store.getNow(key)).toBe([...set].reduce((t, b) => t + 2 ** b, 0));
      }
    }));
    expect(await store.get('session:v1')).toEqual({ id: 'v1' });
    expect(await store.get('avail:v1:dr-1')).toEqual({ id: 'dr-1' });
    expect(store.size).toBe(1);
    expect(() => store.markOnceNow('beacon:v1:dr-1', 31, 600_000)).toThrow(RangeError);
    await store.close();
  });
});
