// The local Redis for tests that are about it: availability (skip with a message otherwise) and per-test key prefixes.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

let redisAnswer: Promise<boolean> | undefined;
/** true when the local Redis answers PING; tests on it skip with a message otherwise. */
export function redisAvailable(): Promise<boolean> {
  redisAnswer ??= (async () => {
    const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 2000, enableOfflineQueue: false });
    client.on('error', () => undefined);
    try {
      await client.connect();
      return (await client.ping()) === 'PONG';
    } catch {
      process.stderr.write(`Redis at ${REDIS_URL} does not answer: the Redis variants of the tests are skipped\n`);
      return false;
    } finally {
      client.disconnect();
    }
  })();
  return redisAnswer;
}

/** A prefix no other test uses, for REDIS_PREFIX. */
export function testRedisPrefix(name: string): string {
  return `test:${name}:${randomBytes(4).toString('hex')}:`;
}

/** Deletes every key under a prefix (SCAN, never KEYS: the Redis is shared). */
export async function deleteRedisPrefix(prefix: string): Promise<void> {
  const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      if (keys.length) await client.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
}
