// The proxy's configuration cache: a read overtaken by an update (invalidate) never caches the stale configuration.
import { describe, expect, it } from 'vitest';
import { CachedAdinsertLookup } from '../../../src/adinserts/adinsert-lookup.js';
import type { AdinsertStore } from '../../../src/adinserts/adinsert.store.js';
import type { AdinsertConfig } from '../../../src/adinserts/adinsert.schema.js';

describe('CachedAdinsertLookup', () => {
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
});
