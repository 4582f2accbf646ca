import type { EngineConfig } from './core/config.js';
import type { Clock } from './core/clock.js';
import type { Logger } from './core/logger.js';
import type { EngineMetrics } from './core/metrics.js';
import type { Store } from './store/database.js';
import type { KeyVault } from '../src/api-keys/key-vault.js';
import type { ApiKeyStore } from '../src/api-keys/api-key.store.js';
import type { TokenService } from '../src/auth/token.service.js';
import type { LoginLimiter } from '../src/auth/rate-limiter.js';

/**
 * Cross-part interfaces (EncodeQueue, ChannelRuntime, the adinsert read cache …). Each part declares its
 * entry by module augmentation: `declare module '../context.js' { interface EngineServices { encodeQueue?: EncodeQueue } }`.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface EngineServices {}

/** What every router and worker gets: built once in createEngine, passed down, never global. */
export interface EngineContext {
  config: EngineConfig;
  logger: Logger;
  clock: Clock;
  store: Store;
  metrics: EngineMetrics;
  vault: KeyVault;
  tokens: TokenService;
  apiKeys: ApiKeyStore;
  loginLimiter: LoginLimiter;
  services: EngineServices;
  /** Closers run in reverse order at shutdown (workers, timers, sockets). */
  onClose(closer: () => Promise<void> | void): void;
}
