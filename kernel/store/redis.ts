// Every ioredis client of the engine is made here, with the same answer to a Redis outage (issue 27): commands fail
// at once while Redis is away (no offline queue, no resend after a reconnect, a command timeout for a Redis that
// accepts but never answers), the client reconnects in the background forever, and its errors are logged, never
// left unheard (an unheard 'error' event ends the process).
import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from '../core/logger.js';

/**
 * A command Redis has not answered by then fails: a hung Redis costs a request this much, not a hang. Not shorter: the
 * timer can fire before a reply already in the socket is read when the event loop stalled (a loaded machine), and a
 * spurious failure turns a decision into content.
 */
export const REDIS_COMMAND_TIMEOUT_MS = 1_000;
const REDIS_CONNECT_TIMEOUT_MS = 2_000;
/** Reconnect attempts back off to this pause between two. */
const REDIS_MAX_RECONNECT_PAUSE_MS = 1_000;
/** A client that keeps failing to reconnect logs once per this interval, not once per attempt. */
const ERROR_LOG_INTERVAL_MS = 30_000;

export interface RedisClientOptions {
  /** what the client is for, in its log lines */
  purpose: string;
  logger?: Logger | undefined;
  /**
   * A subscriber (pub/sub): its SUBSCRIBE waits in the offline queue for the connection and is sent again on every
   * reconnect (ioredis autoResubscribe), instead of failing fast.
   */
  subscriber?: boolean;
}

/**
 * Fail fast rather than queue: `enableOfflineQueue: false` fails a command sent while disconnected at once,
 * `maxRetriesPerRequest: 0` fails one in flight when the connection drops (rather than resending it after the reconnect,
 * when its request has long been answered otherwise), and the command timeout bounds a Redis that went silent. A caller
 * (a playlist) falls back to what it holds in memory in microseconds instead of waiting up to seconds per request.
 */
export function redisOptions(subscriber = false): RedisOptions {
  return {
    connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
    retryStrategy: (attempt) => Math.min(50 * 2 ** Math.min(attempt, 10), REDIS_MAX_RECONNECT_PAUSE_MS),
    ...(subscriber
      ? { enableOfflineQueue: true, maxRetriesPerRequest: null, autoResubscribe: true }
      : { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: REDIS_COMMAND_TIMEOUT_MS, autoResendUnfulfilledCommands: false }),
  };
}

/** A client that logs its connection errors (at most one line per 30 s), reports a reconnect, and never crashes. */
export function createRedisClient(url: string, options: RedisClientOptions): Redis {
  const redis = new Redis(url, redisOptions(options.subscriber));
  let lastLogged = 0;
  let failing = false;
  redis.on('error', (error: Error) => {
    failing = true;
    const now = Date.now();
    if (now - lastLogged < ERROR_LOG_INTERVAL_MS) return;
    lastLogged = now;
    options.logger?.warn({ err: error, purpose: options.purpose }, 'Redis is unavailable; reconnecting in the background');
  });
  redis.on('ready', () => {
    if (!failing) return;
    failing = false;
    lastLogged = 0;
    options.logger?.info({ purpose: options.purpose }, 'Redis is reachable again');
  });
  return redis;
}

/**
 * Resolves when the client can take a command now. A client that was never connected is waited for (a process
 * starting beside Redis should not fail its first requests); one that lost its connection is not (fail fast).
 */
export class RedisReadiness {
  private wasReady = false;
  private firstConnection: Promise<void> | undefined;

  constructor(private readonly redis: Redis) {
    redis.once('ready', () => { this.wasReady = true; });
  }

  get ready(): boolean {
    return this.redis.status === 'ready';
  }

  async check(): Promise<void> {
    if (this.redis.status === 'ready') return;
    if (this.wasReady || this.redis.status === 'end') throw new Error(`Redis is ${this.redis.status}`);
    this.firstConnection ??= new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.redis.off('ready', onReady);
        this.wasReady = true; // waited once: from now on the process answers without Redis until it is back
        reject(new Error(`Redis did not answer within ${REDIS_CONNECT_TIMEOUT_MS} ms`));
      }, REDIS_CONNECT_TIMEOUT_MS);
      timer.unref();
      const onReady = () => {
        clearTimeout(timer);
        resolve();
      };
      this.redis.once('ready', onReady);
    });
    await this.firstConnection;
  }
}
