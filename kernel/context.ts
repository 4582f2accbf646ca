import type { EngineConfig } from './core/config.js';
import type { Clock } from './core/clock.js';
import type { Logger } from './core/logger.js';
import type { EngineMetrics } from './core/metrics.js';
import type { Store } from './store/database.js';

/**
 * Cross-part interfaces (EncodeQueue, ChannelRuntime, the adinsert read cache …). Each part declares its
 * entry by module augmentation: `declare module '../context.js' { interface EngineServices { encodeQueue?: EncodeQueue } }`.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface EngineServices {}

/**
 * What every router and worker gets: built once in createEngine, passed down, never global. The control plane adds
 * its own members (vault, tokens, apiKeys, loginLimiter) by augmentation in src/control-context.ts: the kernel knows
 * no part.
 */
export interface EngineContext {
  config: EngineConfig;
  logger: Logger;
  clock: Clock;
  store: Store;
  metrics: EngineMetrics;
  services: EngineServices;
  /** Closers run in reverse order at shutdown (workers, timers, sockets). */
  onClose(closer: () => Promise<void> | void): void;
}
