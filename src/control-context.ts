// The control plane's members of EngineContext. The kernel declares the context without knowing auth or API keys;
// this augmentation adds them (createEngine in wiring/engine.ts fills them), so `ctx.tokens` reads as before.
import type { KeyVault } from './api-keys/key-vault.js';
import type { ApiKeyStore } from './api-keys/api-key.store.js';
import type { TokenService } from './auth/token.service.js';
import type { LoginLimiter } from './auth/rate-limiter.js';

declare module '../kernel/context.js' {
  interface EngineContext {
    vault: KeyVault;
    tokens: TokenService;
    apiKeys: ApiKeyStore;
    loginLimiter: LoginLimiter;
  }
}
