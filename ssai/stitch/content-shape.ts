// The shape of the content a creative replaces (issue 19 point 1): its segment container, whether its audio is muxed
// into the video segments or in a separate rendition, the H.264 profile/level of each rendition and its audio sample
// rate and channels. Creatives are prepared in this shape so that the stitched stream stays one valid stream.
import { LRUCache } from 'lru-cache';
import type { H264Profile, TargetRung } from '../../vod-encoder/prepare-creative.js';
import type { VariantEntry } from './manifest-rewriter.js';
import { probeSegment, type SegmentStreams } from '../../media/media-probe.js';
import { resolveUri, type MediaPlaylist } from '../../media/playlist-scanner.js';

export type ContentShape = {
  container: 'ts' | 'fmp4';
  muxedAudio: boolean;
  /** from the content's audio (probed); undefined when it could not be read */
  audioSampleRate?: number;
  audioChannels?: number;
};

/** fMP4 when the playlist names an init segment or its segments are .m4s/.mp4/CMAF; MPEG-TS otherwise. */
export function containerOf(pl: MediaPlaylist): 'ts' | 'fmp4' {
  if (pl.segments.some((s) => s.map)) return 'fmp4';
  const uri = (pl.segments[0]?.uri ?? '').split(/[?#]/, 1)[0] ?? '';
  return /\.(m4s|mp4|m4v|m4a|cmf[vat])$/i.test(uri) ? 'fmp4' : 'ts';
}

const PROFILES: Record<number, H264Profile> = { 66: 'baseline', 77: 'main', 88: 'main', 100: 'high' };

/** The H.264 profile and level an RFC 6381 `avc1.PPCCLL` codec string names (undefined for other codecs). */
export function h264Of(codecs: string | undefined): Pick<TargetRung, 'profile' | 'level'> | undefined {
  const m = /\bavc[13]\.([0-9a-f]{2})[0-9a-f]{2}([0-9a-f]{2})\b/i.exec(codecs ?? '');
  if (!m) return undefined;
  const profile = PROFILES[Number.parseInt(m[1]!, 16)];
  const level = Number.parseInt(m[2]!, 16);
  if (!profile) return undefined;
  return { profile, ...(level >= 9 && level <= 62 ? { level: (level / 10).toFixed(1) } : {}) };
}

/** The session's reference video variant: the first video entry (a bare media playlist is one). */
export function referenceVideo(variants: VariantEntry[]): VariantEntry | undefined {
  return variants.find((v) => v.kind === 'video');
}

/** Demuxed when the variant's AUDIO group has renditions with their own playlists; muxed otherwise. */
export function audioRendition(variants: VariantEntry[], video: VariantEntry | undefined): VariantEntry | undefined {
  if (video?.audioGroup === undefined) return undefined;
  return variants.find((v) => v.kind === 'audio' && v.groupId === video.audioGroup);
}

export interface ContentShapesDeps {
  /** the origin media playlist at a URI (the proxy's coalescing fetcher) */
  playlist: (uri: string) => Promise<MediaPlaylist | undefined>;
  probe?: (uri: string, mapUri?: string) => Promise<SegmentStreams | undefined>;
}

/** Shapes by origin playlist, probed once per process (10 min): sessions of one origin share them. */
export class ContentShapes {
  private readonly audio = new LRUCache<string, Promise<SegmentStreams['audio'] | undefined>>({ max: 2000, ttl: 600_000 });
  private readonly probe: NonNullable<ContentShapesDeps['probe']>;
  private readonly shapes = new Map<string, ContentShape>();

  constructor(private readonly deps: ContentShapesDeps) {
    this.probe = deps.probe ?? probeSegment;
  }

  /** The shape of a session's content, from its reference video playlist (`videoPl` when already fetched). */
  async shapeOf(variants: VariantEntry[], videoPl?: MediaPlaylist): Promise<ContentShape> {
    const video = referenceVideo(variants);
    const pl = videoPl ?? (video ? await this.deps.playlist(video.uri) : undefined);
    const rendition = audioRendition(variants, video);
    const shape: ContentShape = { container: pl ? containerOf(pl) : 'fmp4', muxedAudio: !rendition };
    const audioUri = rendition?.uri ?? video?.uri;
    const facts = audioUri ? await this.audioOf(audioUri, audioUri === video?.uri ? pl : undefined) : undefined;
    if (facts?.sampleRate) shape.audioSampleRate = facts.sampleRate;
    const channels = facts?.channels || rendition?.channels;
    if (channels) shape.audioChannels = channels;
    return this.shared(shape);
  }

  /**
   * One frozen object per distinct shape: each viewer's pending early decision holds its shape until it runs (10,000 at
   * once before a break), and an object per call cost ~55 B each.
   */
  private shared(shape: ContentShape): ContentShape {
    const key = `${shape.container} ${shape.muxedAudio} ${shape.audioSampleRate ?? ''} ${shape.audioChannels ?? ''}`;
    let known = this.shapes.get(key);
    if (!known) {
      if (this.shapes.size >= 256) this.shapes.clear();
      this.shapes.set(key, known = Object.freeze(shape));
    }
    return known;
  }

  private audioOf(uri: string, known: MediaPlaylist | undefined): Promise<SegmentStreams['audio'] | undefined> {
    let got = this.audio.get(uri);
    if (!got) {
      got = (async () => {
        const pl = known ?? await this.deps.playlist(uri);
        const seg = pl?.segments[0];
        if (!seg) return undefined;
        const streams = await this.probe(resolveUri(uri, seg.uri), seg.map ? resolveUri(uri, seg.map.uri) : undefined);
        return streams?.audio;
      })().catch(() => undefined);
      this.audio.set(uri, got);
    }
    return got;
  }
}
