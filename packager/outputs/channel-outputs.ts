// The destinations of a channel besides its own origin: HLS pushed to a generic CDN by HTTP PUT, and RTMP pushes.
import path from 'node:path';
import type { Logger } from '../../kernel/core/logger.js';
import type { ChannelOutput } from '../../kernel/seams/channel-runtime.js';
import type { EncoderPlan } from '../encode/encoder-plan.js';
import { MULTIVARIANT_NAME, mediaPlaylistName } from '../hls/multivariant.js';
import { HlsPutPublisher } from './hls-put-publisher.js';
import { RtmpRelay } from './rtmp-relay.js';

export type OutputAlarm = 'HLS_OUTPUT_FAILURE' | 'RTMP_OUTPUT_FAILURE';

export interface ChannelOutputsOptions {
  plan: EncoderPlan;
  publicDir: string;
  workDir: string;
  ffmpegPath: string;
  logger: Logger;
  alarm(code: OutputAlarm, active: boolean, message: string): void;
  bytesOut(bytes: number): void;
}

export class ChannelOutputs {
  private readonly put: HlsPutPublisher | undefined;
  private readonly relays: RtmpRelay[] = [];
  private readonly sentMaps = new Set<string>();
  private started = false;

  constructor(private readonly options: ChannelOutputsOptions) {
    const { plan } = options;
    if (plan.hls.putUrl) {
      this.put = new HlsPutPublisher(plan.hls.putUrl, {
        alarm: (active, message) => options.alarm('HLS_OUTPUT_FAILURE', active, message),
        bytesSent: options.bytesOut,
      }, options.logger);
    }
  }

  /** The outputs of the channel detail: the origin first, then the CDN copy and the RTMP endpoints. */
  endpoints(originUrl: string): ChannelOutput[] {
    const { plan } = this.options;
    return [
      { destinationId: plan.hls.destinationId, type: 'HLS', url: originUrl },
      ...(this.put ? [{ destinationId: plan.hls.destinationId, type: 'HLS', url: this.put.urlOf(this.put.multivariantName) }] : []),
      // the stream key is a secret of the destination: the detail shows the endpoint without it
      ...plan.rtmp.map((r) => ({ destinationId: r.destinationId, type: 'RTMP', url: new URL('.', r.url).toString() })),
    ];
  }

  multivariantWritten(text: string): void {
    this.put?.putText(this.put.multivariantName, text);
  }

  /** A segment finished and its playlist was rewritten (`removed`: segments that left the window). */
  segmentWritten(renditionId: string, segmentFile: string, map: string | undefined, playlist: string, removed: readonly string[]): void {
    if (!this.put) return;
    if (map && !this.sentMaps.has(map)) {
      this.sentMaps.add(map);
      this.put.putFile(map, path.join(this.options.publicDir, map));
    }
    this.put.putFile(segmentFile, path.join(this.options.publicDir, segmentFile));
    this.put.putText(mediaPlaylistName(renditionId), playlist);
    for (const name of removed) this.put.remove(name);
  }

  /** Playlists rewritten without a new segment (an ad break announced). */
  playlistWritten(renditionId: string, playlist: string): void {
    this.put?.putText(mediaPlaylistName(renditionId), playlist);
  }

  /** Starts the RTMP pushes (once the channel has segments to read). */
  start(): void {
    if (this.started) return;
    this.started = true;
    const { options } = this;
    options.plan.rtmp.forEach((r, index) => {
      const relay = new RtmpRelay({
        ffmpegPath: options.ffmpegPath, playlist: path.join(options.publicDir, mediaPlaylistName(r.renditionId)), url: r.url,
        workDir: options.workDir, name: `${r.destinationId}-${index}`, logger: options.logger,
        alarm: (active, message) => options.alarm('RTMP_OUTPUT_FAILURE', active, message),
      });
      this.relays.push(relay);
      relay.start();
    });
  }

  async stop(): Promise<void> {
    await Promise.all(this.relays.map((relay) => relay.stop()));
    await this.put?.close();
  }
}

export { MULTIVARIANT_NAME };
