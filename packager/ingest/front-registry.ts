// Which ingest front serves which protocol (spec 2.4). Pull fronts are built in; push fronts (RTMP_PUSH, SRT_PUSH,
// RIST, RTP, RTP_FEC) are registered by their own module. A protocol without a front fails the start with the reason.
import type { ChannelSpec } from '../../kernel/seams/channel-runtime.js';
import type { IngestFront, IngestProtocol } from './ingest-front.js';
import { IngestConfigError, mp4Front, rtmpPullFront, urlPullFront, type PullInputSettings } from './pull/pull-fronts.js';

export interface FrontRequest {
  spec: ChannelSpec;
  /** the blueprint input (spec 2.1 components…input) */
  input: Record<string, unknown> & { name: string; type?: string };
  dataDir: string;
}

/** A built front and the ingest endpoint it shows in the channel detail. */
export interface BuiltFront {
  front: IngestFront;
  endpoint: { url: string; streamKey?: string };
}

export type FrontFactory = (request: FrontRequest) => Promise<BuiltFront>;

/** Finds the protocol of an input that names none (a managed input carries it). */
export type ProtocolResolver = (request: FrontRequest) => Promise<IngestProtocol | undefined>;

export class FrontRegistry {
  private readonly factories = new Map<IngestProtocol, FrontFactory>();
  private resolver: ProtocolResolver | undefined;

  constructor() {
    const pull = (build: (input: PullInputSettings, dataDir: string) => { publicUrl: string } & IngestFront): FrontFactory => async ({ input, dataDir }) => {
      const front = build(input as PullInputSettings, dataDir);
      return { front, endpoint: { url: front.publicUrl } };
    };
    this.register('URL_PULL', pull(urlPullFront));
    this.register('RTMP_PULL', pull(rtmpPullFront));
    this.register('MP4', pull(mp4Front));
  }

  register(protocol: IngestProtocol, factory: FrontFactory): void {
    this.factories.set(protocol, factory);
  }

  /** Managed inputs may leave `type` out of the blueprint: the resolver reads it from the managed input. */
  setProtocolResolver(resolver: ProtocolResolver): void {
    this.resolver = resolver;
  }

  protocols(): IngestProtocol[] {
    return [...this.factories.keys()];
  }

  async create(request: FrontRequest): Promise<BuiltFront> {
    const protocol = (request.input.type as IngestProtocol | undefined) ?? (await this.resolver?.(request));
    if (!protocol) {
      const managed = typeof request.input.managedInputId === 'string' ? ` (managed input ${request.input.managedInputId} gives none)` : '';
      throw new IngestConfigError(`input ${request.input.name} has no protocol${managed}`);
    }
    const factory = this.factories.get(protocol);
    if (!factory) throw new IngestConfigError(`input ${request.input.name}: the ${protocol} protocol is not available in this engine yet (available: ${this.protocols().join(', ')})`);
    return factory(request);
  }
}
