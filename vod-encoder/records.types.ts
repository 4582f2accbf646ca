// Record shapes of spec 2.12, field for field; built by records.ts from the outputs on disk.

/** `hls_manifest_<height>_<bitrate>` where bitrate is the variant's BANDWIDTH (bit/s) in the master. */
export type HlsManifestMediaType = `hls_manifest_${number}_${number}`;
/** `dash_playlist_<height>_<bitrate>` where bitrate is the Representation@bandwidth (bit/s). */
export type DashPlaylistMediaType = `dash_playlist_${number}_${number}`;

export interface HlsVariant {
  /** Media playlist URI as written in the master (relative to it). */
  path: string;
  bitRate: string;
  cdnUrl: string;
  filePath: string;
  width: number;
  height: number;
  mediaType: HlsManifestMediaType;
}

export interface HlsFormat {
  destBucket: string;
  mediaType: 'hls_master';
  guid: string;
  variants: HlsVariant[];
  hlsName: string;
  cdnUrl: string;
  filePath: string;
  hlsPath: string;
}

export interface DashVariant {
  width: number;
  height: number;
  bitRate: number;
  mediaType: DashPlaylistMediaType;
  /** The Representation has no playlist of its own: this is its initialization segment. */
  cdnUrl: string;
  filePath: string;
}

export interface DashFormat {
  destBucket: string;
  mediaType: 'dash_manifest';
  guid: string;
  variants: DashVariant[];
  cdnUrl: string;
  filePath: string;
  dashPath: string;
  dashName: string;
}

export interface Mp4Format {
  size: number;
  fileName: string;
  mediaType: `mp4_output_${number}`;
  guid: string;
  /** Overall bit/s from ffprobe of the file. */
  bitRate: number;
  width: number;
  height: number;
  cdnUrl: string;
  filePath: string;
  bucket: string;
  key: string;
  /** Seconds, from ffprobe of the file. */
  duration: number;
}

/** `data` of GET /broker/vod/list/<source_guid>. */
export interface FormatsRecord {
  hasHls: boolean;
  hls: HlsFormat;
  hasDash: boolean;
  dash: DashFormat;
  hasMp4: boolean;
  mp4: Mp4Format[];
  hasThumbs: boolean;
}

export interface HlsManifestSegment {
  fileName: string;
  /** Start time of the segment in seconds from the start of the playlist. */
  offset: number;
  destBucket: string;
  cdnUrl: string;
  filePath: string;
  mediaType: `hls_segments_${number}`;
  mediaSequence: number;
  duration: number;
  number: string;
  discontinuityStarts: number[];
  /** Measured: segment bytes × 8 / duration. */
  bitRate: number;
  endList: boolean;
  guid: string;
  playlistType: string;
  timeline: number;
  targetDuration: number;
  discontinuitySequence: number;
  key: string;
  height: number;
}

/** GET /broker/vod/list/<source_guid>/hls/{hls_manifest_media_type}. */
export interface HlsManifestRecord {
  destBucket: string;
  fileName: string;
  mediaType: HlsManifestMediaType;
  /** Video-only bit/s: the matching DASH Representation@bandwidth (same encode). */
  videoBitRate: number;
  segmentsInfo: {
    /** Media type prefix of this source's HLS segment records (`hls_segments`). */
    mediaTypeKey: string;
    hlsSegmentOffsets: number[];
    segmentsCount: number;
    segments: HlsManifestSegment[];
  };
  cdnUrl: string;
  filePath: string;
  frameRate: number;
  guid: string;
  /** BANDWIDTH of the variant in the master (video + audio). */
  bitRate: number;
  width: number;
  height: number;
  /** Measured over the variant's video segments: total bytes × 8 / total duration. */
  averageBitrate: number;
  key: string;
  codecs: string;
}

/** One item of GET …/hls/{hls_segment_media_type}/segments: segment N across every variant. */
export interface HlsSegmentRecord {
  destBucket: string;
  /** `<height>_<bitrate>` → segment URL. */
  segments: Record<string, string>;
  mediaType: `hls_segments_${number}`;
  guid: string;
  playlistType: string;
  discontinuitySequence: number;
  offset: number;
  /** URL prefix shared by every segment URL of this record. */
  prefix: string;
  targetDuration: number;
  duration: number;
  isFirst: boolean;
  mediaSequence: number;
}

/** One item of GET …/dash/{dash_manifest_media_type}/segments. */
export interface DashSegmentRecord {
  destBucket: string;
  fileName: string;
  mediaType: `dash_segment_${number}_${number}_${number}`;
  /** `<bucket>/<key>` of the initialization segment. */
  initBucketPath: string;
  endList: boolean;
  cdnUrl: string;
  filePath: string;
  mediaSequence: number;
  initCdnUrl: string;
  guid: string;
  /** Storage key of the initialization segment (the EXT-X-MAP equivalent). */
  mapKey: string;
  number: number;
  initFilePath: string;
  programId: number;
  bitRate: number;
  width: number;
  height: number;
  targetDuration: number;
  duration: number;
  initFileName: string;
  codecs: string;
  timeline: number;
}

export interface ThumbnailUrls {
  posterUrl: string;
  spriteUrl: string;
  thumbsVttUrl: string;
}

/** Everything the broker's VOD read endpoints serve for one source. */
export interface VodRecords {
  formats: FormatsRecord;
  /** Keyed by `hls_manifest_<height>_<bitrate>`. */
  hlsManifests: Record<string, HlsManifestRecord>;
  hlsSegments: HlsSegmentRecord[];
  /** Keyed by `dash_playlist_<height>_<bitrate>`. */
  dashSegments: Record<string, DashSegmentRecord[]>;
  thumbs: ThumbnailUrls | null;
  /** Duration in seconds of the top MP4 (ffprobe). */
  durationSec: number;
}
