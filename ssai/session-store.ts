// Sessions, avail decisions and beacon marks behind one interface (STYLE.md rule 7): memory LRU+TTL by default,
// Redis when REDIS_URL is set, so any number of ssai instances give one viewer the same ads (DESIGN.md "Processes").
import { LRUCache } from 'lru-cache';
import { Redis } from 'ioredis';

export interface SessionStore {
  get<T>(key: string): Promise<T | undefined>;
  set(key: string, value: unknown, ttlMs: number): Promise<void>;
  /** stores value unless the key exists; returns the value that is stored afterwards and whether ours won */
  setIfAbsent<T>(key: string, value: T, ttlMs: number): Promise<{ value: T; created: boolean }>;
  /** appends to a list kept with the TTL; duplicates are kept, readers dedupe */
  push(key: string, value: string, ttlMs: number): Promise<void>;
  list(key: string): Promise<string[]>;
  close(): Promise<void>;
}

type Entry = { v: string };

export class MemorySessionStore implements SessionStore {
  private readonly lru: LRUCache<string, Entry>;
  private readonly lists: LRUCache<string, string[]>;

  constructor(opts: { max?: number; defaultTtlMs?: number } = {}) {
    const max = opts.max ?? 200_000;
    this.lru = new LRUCache({ max, ttl: opts.defaultTtlMs ?? 3_600_000 });
    this.lists = new LRUCache({ max, ttl: opts.defaultTtlMs ?? 3_600_000 });
  }

  async get<T>(key: string): Promise<T | undefined> {
    const e = this.lru.get(key);
    return e ? (JSON.parse(e.v) as T) : undefined;
  }

  async set(key: string, value: unknown, ttlMs: number): Promise<void> {
    // Stored as JSON text: one copy per value, no shared mutable objects between requests.
    this.lru.set(key, { v: JSON.stringify(value) }, { ttl: ttlMs });
  }

  async setIfAbsent<T>(key: string, value: T, ttlMs: number): Promise<{ value: T; created: boolean }> {
    const e = this.lru.get(key);
    if (e) return { value: JSON.parse(e.v) as T, created: false };
    this.lru.set(key, { v: JSON.stringify(value) }, { ttl: ttlMs });
    return { value, created: true };
  }

  async push(key: string, value: string, ttlMs: number): Promise<void> {
    const l = this.lists.get(key);
    if (l) l.push(value);
    else this.lists.set(key, [value], { ttl: ttlMs });
  }

  async list(key: string): Promise<string[]> {
    return [...(this.lists.get(key) ?? [])];
  }

  /** rough bytes held, for bench/ssai's memory per session */
  get size(): number {
    return this.lru.size + this.lists.size;
  }

  async close(): Promise<void> {
    this.lru.clear();
    this.lists.clear();
  }
}

export class RedisSessionStore implements SessionStore {
  private readonly redis: Redis;

  constructor(url: string, private readonly prefix = 'ssai:') {
    this.redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 2, enableOfflineQueue: true });
    this.redis.on('error', () => undefined); // surfaced per command; a background reconnect must not crash the process
  }

  async get<T>(key: string): Promise<T | undefined> {
    const v = await this.redis.get(this.prefix + key);
    return v === null ? undefined : (JSON.parse(v) as T);
  }

  async set(key: string, value: unknown, ttlMs: number): Promise<void> {
    await this.redis.set(this.prefix + key, JSON.stringify(value), 'PX', Math.max(1, Math.round(ttlMs)));
  }

  async setIfAbsent<T>(key: string, value: T, ttlMs: number): Promise<{ value: T; created: boolean }> {
    const ok = await this.redis.set(this.prefix + key, JSON.stringify(value), 'PX', Math.max(1, Math.round(ttlMs)), 'NX');
    if (ok === 'OK') return { value, created: true };
    const existing = await this.get<T>(key);
    return existing === undefined ? { value, created: false } : { value: existing, created: false };
  }

  async push(key: string, value: string, ttlMs: number): Promise<void> {
    await this.redis.multi().rpush(this.prefix + key, value).pexpire(this.prefix + key, Math.max(1, Math.round(ttlMs))).exec();
  }

  async list(key: string): Promise<string[]> {
    return this.redis.lrange(this.prefix + key, 0, -1);
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

export function createSessionStore(redisUrl: string | undefined, prefix?: string): SessionStore {
  return redisUrl ? new RedisSessionStore(redisUrl, prefix) : new MemorySessionStore();
}
