// Issue 27: the engine's Redis clients through a Redis restart, on a private redis-server: the SSAI session store
// fails with SESSION_STORE_UNAVAILABLE while Redis is away (never waits for it) and reconnects by itself; login rate
// limits fall back to counting in the process.
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisLoginLimiter } from '../../src/auth/rate-limiter.js';
import { systemClock } from '../../kernel/core/clock.js';
import { isSessionStoreUnavailable, RedisSessionStore } from '../../ssai/store/session-store.js';
import { until } from '../cluster/cluster.js';
import { PrivateRedis, privateRedisMissing } from './private-stores.js';

const missing = privateRedisMissing();
if (missing) process.stderr.write(`test/faults/redis-clients: skipped: ${missing}\n`);

describe.skipIf(missing !== undefined)('Redis clients through a Redis restart', () => {
  let redis: PrivateRedis;
  beforeAll(async () => { redis = await PrivateRedis.start(); });
  afterAll(async () => redis?.close());

  it('fails session store commands as SESSION_STORE_UNAVAILABLE while Redis is away, then works again by itself', async () => {
    const store = new RedisSessionStore(redis.url, 'faults:', undefined, pino({ level: 'silent' }));
    try {
      await store.set('session:a', { id: 'a' }, 60_000);
      expect(await store.get('session:a')).toEqual({ id: 'a' });
      await redis.stopServer();
      const failure = await store.get('session:a').then(() => undefined, (error: unknown) => error);
      expect(isSessionStoreUnavailable(failure)).toBe(true);
      expect(store.available).toBe(false);
      await expect(store.setIfAbsent('lock:a', 1, 5000)).rejects.toMatchObject({ code: 'SESSION_STORE_UNAVAILABLE' });
      await redis.startServer();
      await until('the store to reconnect', 20_000, async () => (await store.set('session:b', { id: 'b' }, 60_000).then(() => true, () => undefined)));
      expect(store.available).toBe(true);
      expect(await store.get('session:b')).toEqual({ id: 'b' });
    } finally {
      await store.close();
    }
  });

  it('pauses for a second after a command timed out, and requests during the pause do not extend it', async () => {
    const store = new RedisSessionStore(redis.url, 'faults:', undefined, pino({ level: 'silent' }));
    const admin = new Redis(redis.url);
    try {
      await store.set('session:c', { id: 'c' }, 60_000);
      // Redis holds every other client's commands for 3 s: the store's next command times out (1 s) while connected.
      await admin.call('CLIENT', 'PAUSE', '3000', 'ALL');
      await expect(store.get('session:c')).rejects.toMatchObject({ code: 'SESSION_STORE_UNAVAILABLE' });
      expect(store.available).toBe(false);
      // A request every 250 ms meanwhile: each is refused at once, and the store is used again after the pause.
      const served = await until('a command to go through again while requests keep coming', 20_000, async () =>
        store.get<{ id: string }>('session:c').then((v) => v, () => undefined));
      expect(served).toEqual({ id: 'c' });
      expect(store.available).toBe(true);
    } finally {
      admin.disconnect();
      await store.close();
    }
  });

  it('keeps limiting sign-ins in the process while Redis is away', async () => {
    const limiter = new RedisLoginLimiter(redis.url, 'faults:', systemClock, pino({ level: 'silent' }));
    try {
      await limiter.recordFailure(['email:x@example.test']);
      await redis.stopServer();
      for (let i = 0; i < 5; i++) await limiter.recordFailure(['email:y@example.test']);
      expect(await limiter.retryAfterSeconds(['email:y@example.test'])).toBeGreaterThan(0);
      expect(await limiter.retryAfterSeconds(['email:z@example.test'])).toBe(0);
      await redis.startServer();
    } finally {
      await limiter.close();
    }
  });
});
