// Registers the ChannelRuntime and AdinsertLookup entries of ctx.services (module augmentation, ARCHITECTURE.md).
import type { ChannelRuntime } from '../../packager/channel-runtime.js';

/** Organization-scoped read of ad-insertion configurations, given by the SSAI part (spec 2.11). */
export interface AdinsertLookup {
  get(organizationId: string, id: string): Promise<{ id: string; type: string; sourceUrl: string } | undefined>;
}

declare module '../context.js' {
  interface EngineServices {
    /** Runs channels (the packager); absent until a runtime is registered: starts then fail with a reason. */
    channelRuntime?: ChannelRuntime;
    adinsertLookup?: AdinsertLookup;
  }
}

export const NO_RUNTIME_REASON = 'no channel runtime is available in this engine (the packager role is not implemented yet)';
