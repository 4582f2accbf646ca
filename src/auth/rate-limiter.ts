import type { Redis } from 'ioredis';
import { createRedisClient, RedisReadiness } from '../../kernel/store/redis.js';
import type { Clock } from '../../kernel/core/clock.js';
import type { Logger } from '../../kernel/core/logger.js';

/** Failed sign-ins counted per key (an email, an address) in a fixed window. */
export interface LoginLimiter {
  /** Seconds until every key may try again, or 0 when they may try now. */
  retryAfterSeconds(keys: string[]): Promise<number>;
  recordFailure(keys: string[]): Promise<void>;
  reset(key: string): Promise<void>;
  close(): Promise<void>;
}

export const LOGIN_MAX_FAILURES = 5;
export const LOGIN_WINDOW_MS = 15 * 60 * 1000;

/**
 * One process's counts, in memory: a restart forgiving a few failures is acceptable, and the login path stays free
 * of database writes. With several api processes each would count alone, so REDIS_URL switches to RedisLoginLimiter.
 */
export class LoginRateLimiter implements LoginLimiter {
  private readonly failures = new Map<string, { count: number; windowStart: number }>();

  constructor(
    private readonly clock: Clock,
    private readonly maxFailures = LOGIN_MAX_FAILURES,
    private readonly windowMs = LOGIN_WINDOW_MS,
  ) {}

  async retryAfterSeconds(keys: string[]): Promise<number> {
    const now = this.clock.nowMs();
    let wait = 0;
    for (const key of keys) {
      const entry = this.failures.get(key);
      if (!entry) continue;
      if (now - entry.windowStart >= this.windowMs) {
        this.failures.delete(key);
        continue;
      }
      if (entry.count >= this.maxFailures) wait = Math.max(wait, Math.ceil((entry.windowStart + this.windowMs - now) / 1000));
    }
    return wait;
  }

  async recordFailure(keys: string[]): Promise<void> {
    const now = this.clock.nowMs();
    for (const key of keys) {
      const entry = this.failures.get(key);
      if (!entry || now - entry.windowStart >= this.windowMs) this.failures.set(key, { count: 1, windowStart: now });
      else entry.count += 1;
    }
    if (this.failures.size > 100_000) this.failures.clear(); // bound memory under a credential-stuffing flood
  }

  async reset(key: string): Promise<void> {
    this.failures.delete(key);
  }

  async close(): Promise<void> {
    this.failures.clear();
  }
}

/**
 * The same fixed window shared by every api process through Redis (issue 20): one counter per key whose expiry is the
 * window, so a limit reached on one instance holds on all. Redis keeps the time (its TTLs), not the process clock.
 * When Redis fails the process falls back to its own counts rather than refusing every sign-in.
 */
export class RedisLoginLimiter implements LoginLimiter {
  private readonly redis: Redis;
  private readonly readiness: RedisReadiness;
  private readonly fallback: LoginRateLimiter;
  private lastWarning = 0;

  constructor(
    url: string,
    private readonly prefix: string,
    clock: Clock,
    private readonly logger: Logger,
    private readonly maxFailures = LOGIN_MAX_FAILURES,
    private readonly windowMs = LOGIN_WINDOW_MS,
  ) {
    // fails fast while Redis is away (kernel/store/redis.ts): a sign-in then counts in this process
    this.redis = createRedisClient(url, { purpose: 'login rate limits', logger });
    this.readiness = new RedisReadiness(this.redis);
    this.fallback = new LoginRateLimiter(clock, maxFailures, windowMs);
  }

  private key(key: string): string {
    return `${this.prefix}login:${key}`;
  }

  private warn(error: unknown): void {
    const now = Date.now();
    if (now - this.lastWarning < 60_000) return;
    this.lastWarning = now;
    this.logger.warn({ err: error }, 'Redis is unavailable for login rate limits; counting in this process meanwhile');
  }

  async retryAfterSeconds(keys: string[]): Promise<number> {
    try {
      await this.readiness.check(); // the first connection is waited for, so a starting process shares its counts too
      const pipeline = this.redis.pipeline();
      for (const key of keys) pipeline.get(this.key(key)).pttl(this.key(key));
      const answers = (await pipeline.exec()) ?? [];
      let wait = 0;
      keys.forEach((_key, index) => {
        const count = Number(answers[index * 2]?.[1] ?? 0);
        const ttl = Number(answers[index * 2 + 1]?.[1] ?? -2);
        if (count >= this.maxFailures && ttl > 0) wait = Math.max(wait, Math.ceil(ttl / 1000));
      });
      return Math.max(wait, await this.fallback.retryAfterSeconds(keys));
    } catch (error) {
      this.warn(error);
      return this.fallback.retryAfterSeconds(keys);
    }
  }

  async recordFailure(keys: string[]): Promise<void> {
    try {
      await this.readiness.check();
      const multi = this.redis.multi();
      // The window starts with the first failure: NX leaves a running window's expiry alone.
      for (const key of keys) multi.set(this.key(key), '0', 'PX', this.windowMs, 'NX').incr(this.key(key));
      await multi.exec();
    } catch (error) {
      this.warn(error);
      await this.fallback.recordFailure(keys);
    }
  }

  async reset(key: string): Promise<void> {
    await this.fallback.reset(key);
    try {
      await this.readiness.check();
      await this.redis.del(this.key(key));
    } catch (error) {
      this.warn(error);
    }
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

export function createLoginLimiter(options: { redisUrl: string | undefined; redisPrefix: string; clock: Clock; logger: Logger }): LoginLimiter {
  return options.redisUrl
    ? new RedisLoginLimiter(options.redisUrl, options.redisPrefix, options.clock, options.logger)
    : new LoginRateLimiter(options.clock);
}
