import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_EMAIL, startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { deleteRedisPrefix, REDIS_URL, redisAvailable, testRedisPrefix } from '../../helpers/redis.js';
import { LOGIN_MAX_FAILURES } from '../../../src/auth/rate-limiter.js';

const redis = await redisAvailable();

const signIn = (engine: TestEngine, password: string) => engine.api('POST', '/auth/authorize', { body: { email: ADMIN_EMAIL, password } });

describe.skipIf(!redis)('login rate limits shared through Redis', () => {
  const prefix = testRedisPrefix('login');
  let first: TestEngine;
  let second: TestEngine;
  beforeAll(async () => {
    const env = { REDIS_URL, REDIS_PREFIX: prefix };
    first = await startTestEngine({ env });
    second = await startTestEngine({ env });
  });
  afterAll(async () => {
    await first?.close();
    await second?.close();
    await deleteRedisPrefix(prefix);
  });

  it('refuses on one api process the sign-ins another one counted, with Retry-After', async () => {
    for (let i = 0; i < LOGIN_MAX_FAILURES; i++) expect((await signIn(first, 'wrong-password')).status).toBe(401);
    const limited = await signIn(second, 'wrong-password');
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('RATE_LIMITED');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // The limit holds for the right password too until the window ends, on both.
    expect((await signIn(second, 'correct-horse-battery')).status).toBe(429);
    expect((await signIn(first, 'correct-horse-battery')).status).toBe(429);
  });
});

describe('login rate limits when Redis fails', () => {
  let engine: TestEngine;
  beforeAll(async () => {
    // A closed port: every Redis command fails, and the process counts on its own instead of refusing sign-ins.
    engine = await startTestEngine({ env: { REDIS_URL: 'redis://127.0.0.1:1', REDIS_PREFIX: testRedisPrefix('down') } });
  });
  afterAll(async () => engine?.close());

  it('still signs in, and still limits within the process', async () => {
    expect((await signIn(engine, 'correct-horse-battery')).status).toBe(200);
    for (let i = 0; i < LOGIN_MAX_FAILURES; i++) expect((await signIn(engine, 'wrong-password')).status).toBe(401);
    expect((await signIn(engine, 'wrong-password')).status).toBe(429);
  });
});
