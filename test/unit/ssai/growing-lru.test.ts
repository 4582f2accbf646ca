// growingLru (issue 19 point 4): bounded by its entry count as lru-cache's `max`, without allocating every slot up front.
import { describe, expect, it } from 'vitest';
import { growingLru } from '../../../ssai/store/growing-lru.js';

describe('growingLru', () => {
  it('keeps at most maxEntries, evicting the least recently used', () => {
    const lru = growingLru<string, number>(3);
    for (const [k, v] of [['a', 1], ['b', 2], ['c', 3]] as const) lru.set(k, v);
    expect(lru.get('a')).toBe(1); // a is now the most recent
    lru.set('d', 4);
    expect([...lru.keys()].sort()).toEqual(['a', 'c', 'd']);
    expect(lru.size).toBe(3);
  });

  it('expires entries by their TTL', async () => {
    const lru = growingLru<string, string>(10, { ttl: 60_000 });
    lru.set('short', 'x', { ttl: 10 });
    lru.set('long', 'y');
    // waits for the short one to lapse (a loaded machine may take longer than 10 ms; the long one has a minute)
    for (let i = 0; i < 500 && lru.get('short') !== undefined; i++) await new Promise((r) => setTimeout(r, 10));
    expect(lru.get('short')).toBeUndefined();
    expect(lru.get('long')).toBe('y');
    expect(lru.getRemainingTTL('long')).toBeGreaterThan(0);
  });

  it('holds many entries past its first slots (its arrays grow with use)', () => {
    const lru = growingLru<number, number>(100_000, { ttl: 60_000 });
    for (let i = 0; i < 50_000; i++) lru.set(i, i * 2);
    expect(lru.size).toBe(50_000);
    expect(lru.get(49_999)).toBe(99_998);
    expect(lru.get(0)).toBe(0);
  });
});
