// The proxy's configuration cache: a read overtaken by an update (invalidate) never caches the stale configuration.
import { describe, expect, it } from 'vitest';
import { CachedAdinsertLookup } from '../../../src/adinserts/adinsert-lookup.js';
import type { AdinsertStore } from '../../../src/adinserts/adinsert.store.js';
import type { AdinsertConfig } from '../../../src/adinserts/adinsert.schema.js';

describe('CachedAdinsertLookup', () => {
  it('answers without a wait (getNow) only a configuration it holds fresh', async () => {
    const store = { getAny: async (guid: string) => (guid === 'known' ? { guid, adServer: 'http://ads.test/v1' } as unknown as AdinsertConfig : undefined) } as unknown as AdinsertStore;
    const lookup = new CachedAdinsertLookup(store, { ttlMs: 60_000 });
    expect(lookup.getNow('known')).toBeUndefined(); // never read: get() reads it
    const read = await lookup.get('known');
    expect(lookup.getNow('known')).toBe(read);
    expect(await lookup.get('missing')).toBeUndefined();
    expect(lookup.getNow('missing')).toBeUndefined();
    lookup.invalidate('known');
    expect(lookup.getNow('known')).toBeUndefined();
  });

  it('does not cache a read that started before an invalidate', async () => {
    let version = 1;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => { release = r; });
    const store = {
      getAny: async (guid: string) => {
        const v = version;
        if (v === 1) await gate; // the first read is slow: the update lands while it is in flight
        return { guid, adServer: `http://ads.test/v${v}` } as unknown as AdinsertConfig;
      },
    } as unknown as AdinsertStore;
    const lookup = new CachedAdinsertLookup(store);
    const stale = lookup.get('g');
    version = 2;
    lookup.invalidate('g'); // the configuration was updated
    const fresh = await Promise.race([lookup.get('g'), new Promise<undefined>((r) => setTimeout(() => r(undefined), 1000))]);
    release();
    expect(fresh?.adServer).toBe('http://ads.test/v2');
    expect((await stale)?.adServer).toBe('http://ads.test/v1');
    expect((await lookup.get('g'))?.adServer).toBe('http://ads.test/v2');
  });

  it('serves a configuration it read before while the database is down, and refuses one it never read (issue 27)', async () => {
    let down = false;
    const store = {
      getAny: async (guid: string) => {
        if (down) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
        return { guid, adServer: 'http://ads.test/v1' } as unknown as AdinsertConfig;
      },
    } as unknown as AdinsertStore;
    const lookup = new CachedAdinsertLookup(store, { ttlMs: 1 });
    expect((await lookup.get('known'))?.adServer).toBe('http://ads.test/v1');
    down = true;
    await new Promise((r) => setTimeout(r, 5)); // past its freshness: the next read goes to the (down) database
    expect((await lookup.get('known'))?.adServer).toBe('http://ads.test/v1');
    await expect(lookup.get('never-read')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
