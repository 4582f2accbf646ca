// Registers the ChannelRuntime entry of ctx.services (module augmentation, ARCHITECTURE.md). The adinsertLookup entry
// channels read is declared once, in src/adinserts/adinsert-lookup.ts.
import type { ChannelRuntime } from '../../kernel/seams/channel-runtime.js';

declare module '../../kernel/context.js' {
  interface EngineServices {
    /** Runs channels (the packager); absent until a runtime is registered: starts then fail with a reason. */
    channelRuntime?: ChannelRuntime;
  }
}

export const NO_RUNTIME_REASON = 'no channel runtime is available in this engine (it does not run the packager role)';
