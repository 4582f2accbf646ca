// Optional Redis wake-up for channel commands (REDIS_URL set): a sender announces a new command and a packager
// announces an answer, so neither waits for its next poll. The rows stay the truth: a lost message costs one poll.
import type { Logger } from '../../kernel/core/logger.js';
import { createRedisClient } from '../../kernel/store/redis.js';
import type { CommandWakeup } from '../../kernel/seams/channel-commands.js';

export function redisCommandWakeup(url: string, prefix: string, logger: Logger): CommandWakeup {
  const channel = `${prefix}channel-commands`;
  // Redis away: a wake-up is lost (the poll still runs) and the subscription is made again on the reconnect.
  const pub = createRedisClient(url, { purpose: 'channel command wake-ups', logger });
  const sub = createRedisClient(url, { purpose: 'channel command wake-ups', logger, subscriber: true });
  const listeners = new Set<(message: string) => void>();
  sub.on('message', (_channel: string, message: string) => {
    for (const listener of listeners) listener(message);
  });
  void sub.subscribe(channel).catch((error: unknown) => logger.warn({ err: error }, 'channel command wake-ups are off: the Redis subscription failed'));
  return {
    publish: (message) => void pub.publish(channel, message).catch(() => undefined),
    subscribe: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close: async () => {
      listeners.clear();
      sub.disconnect();
      pub.disconnect();
    },
  };
}
