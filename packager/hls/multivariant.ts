// The channel's multivariant playlist (RFC 8216 4.3.4.2): one variant per rendition of the encoder plan, muxed audio.
import HLS from 'hls-parser';
import { codecsOf, type VideoRendition } from '../encode/encoder-plan.js';

const { MasterPlaylist, Variant } = HLS.types;

export const mediaPlaylistName = (renditionId: string): string => `index_${renditionId}.m3u8`;
export const MULTIVARIANT_NAME = 'index.m3u8';

export function renderMultivariant(renditions: readonly VideoRendition[]): string {
  const playlist = new MasterPlaylist({
    version: 6,
    independentSegments: true,
    variants: renditions.map((r) => new Variant({
      uri: mediaPlaylistName(r.id),
      // peak: the encoder's maxrate plus audio plus ~10 % of container overhead
      bandwidth: Math.round((r.videoBitrate + r.audioBitrate) * 1.1),
      averageBandwidth: r.videoBitrate + r.audioBitrate,
      codecs: codecsOf(r),
      resolution: { width: r.width, height: r.height },
      frameRate: Math.round(r.frameRate * 1000) / 1000,
    })),
  });
  return HLS.stringify(playlist);
}
