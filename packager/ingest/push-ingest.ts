/**
 * Push ingest for the live runtime (spec 2.4, issue 18 part 1): the fronts of RTMP_PUSH, SRT_PUSH, RIST, RTP and
 * RTP_FEC inputs. The runtime's front registry asks this service for one front per push input of a channel:
 *
 *   const push = createPushIngestService(ctx);            // once per engine; closes with the engine
 *   const { front, endpoint } = await push.open({
 *     protocol: 'SRT_PUSH', input: 'srt-in', workflowId,
 *     cidrs: [...workflow.inputWhitelistCIDRs, ...input.inputSecurityGroups],
 *     ...pushSpecOfManagedInput(managed.input),           // managed: its fixed port and key; unmanaged: omit
 *   });
 *   // endpoint → ChannelInputEndpoint (url, streamKey) reported in the channel detail
 *   // front.spawnEncoderOn === 'connected' for every push front: the slate runs until a sender is accepted; then
 *   //   spawn the encoder with front.encoderInputArgs() (FLV or MPEG-TS from a loopback TCP port of the front);
 *   //   it sees its input end when the sender leaves.
 *   // front.subscribe(): connected / disconnected (input loss → slate) / rejected (wrong key, address, passphrase)
 *   await front.close();                                  // at stop, and in a failed start's rollback
 *
 * Every check happens before a byte reaches the encoder: RTMP stream key and CIDR list in our own RTMP server (one
 * per engine on RTMP_PORT, shared by stream key), the CIDR list in the UDP relay, the SRT passphrase in the front's
 * private ffmpeg listener (the relay reads its verdict from the handshake; the front runs, watches and kills that
 * listener). Managed inputs keep their port and key across starts; unmanaged ones get an ephemeral port (outside
 * the managed range) and a fresh key per start. wiring/packager.part.ts registers the fronts.
 */
import { randomBytes } from 'node:crypto';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { EngineContext } from '../../kernel/context.js';
import { ingestHost, type ManagedInputRecord } from '../../kernel/seams/managed-inputs.js';
import type { IngestFront, IngestProtocol } from './ingest-front.js';
import { RtmpServer } from './rtmp/rtmp-server.js';
import { openRtmpFront } from './rtmp/rtmp-front.js';
import { openUdpFront } from './udp/udp-front.js';

export type PushProtocol = Extract<IngestProtocol, 'RTMP_PUSH' | 'SRT_PUSH' | 'RIST' | 'RTP' | 'RTP_FEC'>;
export const PUSH_PROTOCOLS: readonly PushProtocol[] = ['RTMP_PUSH', 'SRT_PUSH', 'RIST', 'RTP', 'RTP_FEC'];

export function isPushProtocol(protocol: string): protocol is PushProtocol {
  return (PUSH_PROTOCOLS as readonly string[]).includes(protocol);
}

export interface PushIngestSpec {
  protocol: PushProtocol;
  /** the blueprint's input name, for logs and metrics */
  input: string;
  workflowId?: string | undefined;
  /** who may push (the input's CIDR list); empty: anyone */
  cidrs: readonly string[];
  /** further allow-lists a sender must pass too: the workflow's inputWhitelistCIDRs */
  alsoAllowedBy?: readonly (readonly string[])[] | undefined;
  /** RTMP stream key or SRT passphrase; omitted: a fresh one (unmanaged input) */
  streamKey?: string | undefined;
  /** UDP listener port; omitted: an ephemeral one (unmanaged input) */
  port?: number | undefined;
  /** a silent UDP sender is reported gone after this long (default 3 s) */
  idleMs?: number | undefined;
}

/** What the channel detail shows for the input (spec: channel `inputs`). */
export interface PushEndpoint {
  url: string;
  streamKey?: string;
}

export interface OpenedPushFront {
  front: IngestFront;
  endpoint: PushEndpoint;
}

export interface PushIngestService {
  open(spec: PushIngestSpec): Promise<OpenedPushFront>;
  /** the RTMP server's port once it listens (RTMP_PORT, or the port picked for 0) */
  rtmpPort(): number | undefined;
  close(): Promise<void>;
}

declare module '../../kernel/context.js' {
  interface EngineServices {
    pushIngest?: PushIngestService;
  }
}

/** The fixed part of a managed input's front: its protocol, port and key (a connected device pushes SRT). */
export function pushSpecOfManagedInput(input: ManagedInputRecord): Pick<PushIngestSpec, 'protocol' | 'streamKey' | 'port'> | undefined {
  const protocol = input.type === 'CONNECTED_DEVICE' ? 'SRT_PUSH' : input.protocol;
  if (!protocol || !isPushProtocol(protocol)) return undefined;
  return { protocol, streamKey: input.ingest.streamKey, port: input.ingest.port };
}

interface IngestMetrics {
  events: Counter<'protocol' | 'event' | 'reason'>;
  open: Gauge<'protocol'>;
  connected: Gauge<'protocol'>;
}

/** One set per registry: a second service on the same registry (tests) reuses the first one's metrics. */
function ingestMetrics(registry: Registry): IngestMetrics {
  const existing = registry.getSingleMetric('engine_ingest_events_total');
  if (existing) {
    return {
      events: existing as Counter<'protocol' | 'event' | 'reason'>,
      open: registry.getSingleMetric('engine_ingest_fronts_open') as Gauge<'protocol'>,
      connected: registry.getSingleMetric('engine_ingest_senders_connected') as Gauge<'protocol'>,
    };
  }
  return {
    events: new Counter({
      name: 'engine_ingest_events_total',
      help: 'Push ingest events by protocol: connected, disconnected, rejected (with the reason)',
      labelNames: ['protocol', 'event', 'reason'] as const,
      registers: [registry],
    }),
    open: new Gauge({ name: 'engine_ingest_fronts_open', help: 'Push ingest fronts open, by protocol', labelNames: ['protocol'] as const, registers: [registry] }),
    connected: new Gauge({ name: 'engine_ingest_senders_connected', help: 'Senders pushing right now, by protocol', labelNames: ['protocol'] as const, registers: [registry] }),
  };
}

function endpointOf(protocol: PushProtocol, host: string, port: number, streamKey: string | undefined): PushEndpoint {
  switch (protocol) {
    case 'RTMP_PUSH':
      return { url: `rtmp://${host}:${port}/live/${streamKey ?? ''}`, ...(streamKey ? { streamKey } : {}) };
    case 'SRT_PUSH':
      return { url: `srt://${host}:${port}${streamKey ? `?passphrase=${encodeURIComponent(streamKey)}` : ''}`, ...(streamKey ? { streamKey } : {}) };
    case 'RIST':
      return { url: `rist://${host}:${port}` };
    case 'RTP':
    case 'RTP_FEC':
      return { url: `rtp://${host}:${port}` };
  }
}

/** What push ingest needs of the engine: its listen address, public host, ffmpeg, logs, metrics and shutdown. */
export type PushIngestContext = Pick<EngineContext, 'logger' | 'metrics' | 'clock' | 'onClose'> & {
  config: Pick<EngineContext['config'], 'publicUrl' | 'rtmpPort' | 'host' | 'ffmpegPath'>;
};

export function createPushIngestService(ctx: PushIngestContext): PushIngestService {
  const logger = ctx.logger.child({ part: 'ingest' });
  const metrics = ingestMetrics(ctx.metrics.registry);
  const host = ingestHost(ctx.config.publicUrl);
  let rtmp: { server: RtmpServer; port: number } | undefined;
  let rtmpStarting: Promise<{ server: RtmpServer; port: number }> | undefined;
  const fronts = new Set<IngestFront>();
  let closed = false;

  const startRtmp = (): Promise<{ server: RtmpServer; port: number }> => {
    rtmpStarting ??= (async () => {
      const server = new RtmpServer({
        onRejected: (reason, remoteAddress) => {
          metrics.events.inc({ protocol: 'RTMP_PUSH', event: 'rejected', reason });
          logger.warn({ protocol: 'RTMP_PUSH', remoteAddress, reason }, 'push refused');
        },
      });
      const port = await server.listen(ctx.config.rtmpPort, ctx.config.host).catch((error: unknown) => {
        // packagers of one cluster on one host each need their own RTMP_PORT: say so instead of a bare EADDRINUSE
        if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
        throw new Error(`the RTMP ingest port ${ctx.config.rtmpPort} is taken by another process (packagers sharing a host need their own RTMP_PORT)`);
      });
      logger.info({ port }, 'RTMP ingest server listening');
      rtmp = { server, port };
      return rtmp;
    })();
    // a failed listen (port taken) is retried by the next RTMP start rather than remembered
    rtmpStarting.catch(() => {
      rtmpStarting = undefined;
    });
    return rtmpStarting;
  };

  const service: PushIngestService = {
    async open(spec) {
      if (closed) throw new Error('the push ingest service is closed');
      const streamKey = spec.streamKey ?? (spec.protocol === 'RTMP_PUSH' || spec.protocol === 'SRT_PUSH' ? randomBytes(16).toString('hex') : undefined);
      let front: IngestFront;
      let port: number;
      if (spec.protocol === 'RTMP_PUSH') {
        const { server, port: rtmpPort } = await startRtmp();
        front = await openRtmpFront({ server, streamKey: streamKey ?? '', cidrs: spec.cidrs, alsoAllowedBy: spec.alsoAllowedBy, now: () => ctx.clock.nowMs() });
        port = rtmpPort;
      } else {
        const udp = await openUdpFront({
          protocol: spec.protocol,
          host: ctx.config.host,
          port: spec.port ?? 0,
          cidrs: spec.cidrs,
          alsoAllowedBy: spec.alsoAllowedBy,
          ffmpegPath: ctx.config.ffmpegPath,
          passphrase: spec.protocol === 'SRT_PUSH' ? streamKey : undefined,
          ...(spec.idleMs !== undefined ? { idleMs: spec.idleMs } : {}),
          now: () => ctx.clock.nowMs(),
        }).catch((error: unknown) => {
          const code = (error as NodeJS.ErrnoException).code;
          throw new Error(code === 'EADDRINUSE' ? `ingest port ${String(spec.port)} of input ${spec.input} is in use` : `input ${spec.input}: ${error instanceof Error ? error.message : String(error)}`);
        });
        front = udp;
        port = udp.port;
      }
      const labels = { protocol: spec.protocol };
      const context = { workflowId: spec.workflowId, input: spec.input, protocol: spec.protocol };
      let connected = false;
      front.subscribe((event) => {
        if (event.type === 'connected') {
          if (!connected) metrics.connected.inc(labels);
          connected = true;
          metrics.events.inc({ ...labels, event: 'connected', reason: '' });
          logger.info({ ...context, remoteAddress: event.remoteAddress }, 'sender connected');
        } else if (event.type === 'disconnected') {
          if (connected) metrics.connected.dec(labels);
          connected = false;
          metrics.events.inc({ ...labels, event: 'disconnected', reason: '' });
          logger.info({ ...context, reason: event.reason }, 'sender disconnected');
        } else {
          metrics.events.inc({ ...labels, event: 'rejected', reason: event.reason });
          logger.warn({ ...context, remoteAddress: event.remoteAddress, reason: event.reason }, 'push refused');
        }
      });
      metrics.open.inc(labels);
      let closing: Promise<void> | undefined;
      // The fronts are plain objects (no `this`), so a copy with a counting close() is the same front.
      const tracked: IngestFront = {
        ...front,
        close: () => {
          closing ??= (async () => {
            await front.close();
            fronts.delete(tracked);
            metrics.open.dec(labels);
            if (connected) metrics.connected.dec(labels);
            connected = false;
          })();
          return closing;
        },
      };
      fronts.add(tracked);
      logger.info({ ...context, port }, 'push input open');
      return { front: tracked, endpoint: endpointOf(spec.protocol, host, port, streamKey) };
    },
    rtmpPort: () => rtmp?.port,
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...fronts].map((front) => front.close()));
      if (rtmpStarting) await (await rtmpStarting.catch(() => undefined))?.server.close();
    },
  };
  ctx.onClose(() => service.close());
  return service;
}
