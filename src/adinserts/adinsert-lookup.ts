// The cached read interface the proxy uses for every playlist (issue 5 "Speed by design"): an LRU invalidated on
// update/delete in this process; the TTL bounds staleness when the api role runs in another process.
import { LRUCache } from 'lru-cache';
import type { AdinsertCache, AdinsertConfig, AdinsertLookup } from '../../kernel/seams/adinserts.js';
import type { AdinsertStore } from './adinsert.store.js';

// The seam's types live in the kernel (the proxy reads them too); re-exported for the control plane's callers.
export type { AdinsertCache, AdinsertLookup, AdinsertRef } from '../../kernel/seams/adinserts.js';

const MISSING = Symbol('missing');
const RETRY_AFTER_FAILURE_MS = 1000;

/**
 * Fresh for `ttlMs`, then served stale while one read refreshes it in the background (stale-while-revalidate): a
 * playlist never waits on the database for a configuration this process has read once, and a PostgreSQL outage
 * (issue 27) leaves every known configuration served as last read. Only one never read here needs the database.
 */
export class CachedAdinsertLookup implements AdinsertCache {
  private readonly cache: LRUCache<string, AdinsertConfig | typeof MISSING>;
  /** the last answer read for each guid, kept past its freshness (bounded like the cache) */
  private readonly known: LRUCache<string, AdinsertConfig | typeof MISSING>;
  private readonly inflight = new Map<string, Promise<AdinsertConfig | undefined>>();
  /** when a read last failed (ms): stale answers are refreshed at most once a second meanwhile */
  private failedAt = 0;

  constructor(private readonly store: AdinsertStore, opts: { max?: number; ttlMs?: number } = {}) {
    this.cache = new LRUCache({ max: opts.max ?? 10_000, ttl: opts.ttlMs ?? 10_000 });
    this.known = new LRUCache({ max: opts.max ?? 10_000 });
  }

  /** The configuration when it is cached and fresh, without a promise (the playlist's hot path); else undefined. */
  getNow(guid: string): AdinsertConfig | undefined {
    const hit = this.cache.get(guid);
    return hit === MISSING ? undefined : hit;
  }

  async get(guid: string): Promise<AdinsertConfig | undefined> {
    const hit = this.cache.get(guid);
    if (hit !== undefined) return hit === MISSING ? undefined : hit;
    const stale = this.known.get(guid);
    if (stale === undefined) return this.read(guid);
    // The database away: the stale answer stands until a read succeeds, tried at most once a second (not per playlist).
    if (Date.now() - this.failedAt >= RETRY_AFTER_FAILURE_MS) this.read(guid).catch(() => undefined);
    return stale === MISSING ? undefined : stale;
  }

  /** One read per guid at a time; its answer becomes fresh and known. */
  private read(guid: string): Promise<AdinsertConfig | undefined> {
    const running = this.inflight.get(guid);
    if (running) return running;
    // A read that an update or delete overtook (invalidate) neither caches its stale answer nor drops the newer read.
    const pending: Promise<AdinsertConfig | undefined> = this.store.getAny(guid).then((config) => {
      if (this.inflight.get(guid) === pending) {
        this.cache.set(guid, config ?? MISSING);
        this.known.set(guid, config ?? MISSING);
      }
      return config;
    }, (error: unknown) => {
      this.failedAt = Date.now();
      throw error;
    }).finally(() => {
      if (this.inflight.get(guid) === pending) this.inflight.delete(guid);
    });
    this.inflight.set(guid, pending);
    return pending;
  }

  async findForOrganization(organizationId: string, guid: string): Promise<AdinsertConfig | undefined> {
    const config = await this.get(guid);
    return config && config.organizationId === organizationId ? config : undefined;
  }

  invalidate(guid: string): void {
    this.cache.delete(guid);
    this.known.delete(guid);
    this.inflight.delete(guid);
  }
}

/** The channels' lookup over the cache: `id` is the guid, another organization's configuration is not found. */
export function organizationLookup(cache: AdinsertCache): AdinsertLookup {
  return {
    get: async (organizationId, id) => {
      const config = await cache.findForOrganization(organizationId, id);
      return config && { id: config.guid, type: config.type, sourceUrl: config.sourceUrl };
    },
  };
}
